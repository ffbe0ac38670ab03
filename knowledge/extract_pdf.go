package knowledge

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ledongthuc/pdf"
)

// maxPDFPages bounds the work one upload can cause.
const maxPDFPages = 2000

// extractPDF reads the text of every page with github.com/ledongthuc/pdf, the maintained
// fork of rsc.io/pdf: it handles xref tables and streams, FlateDecode and the other common
// filters, and ToUnicode CMaps. Encrypted documents are refused. The parser was written for
// well-formed input and can panic on damaged files: Extract recovers that into an error.
func extractPDF(content []byte) (string, error) {
	r, err := pdf.NewReader(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		return "", fmt.Errorf("cannot read the pdf file: %v", err)
	}
	n := r.NumPage()
	if n <= 0 {
		return "", fmt.Errorf("cannot read the pdf file: no pages found")
	}
	if n > maxPDFPages {
		return "", fmt.Errorf("cannot read the pdf file: more than %d pages", maxPDFPages)
	}
	var b limitedBuilder
	for i := 1; i <= n; i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			return "", fmt.Errorf("cannot read the pdf file: page %d is missing", i)
		}
		text, err := p.GetPlainText(nil) // nil: each page's own fonts, font names are per-page resources
		if err != nil {
			return "", fmt.Errorf("cannot read the pdf file: page %d: %v", i, err)
		}
		b.WriteString(strings.TrimSpace(text))
		b.WriteString("\n\n")
		if b.full {
			return "", fmt.Errorf("cannot read the pdf file: %w", errTooMuchText)
		}
	}
	return b.String(), nil
}
