package knowledge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ledongthuc/pdf"
)

// Bounds on the work one PDF can cause: pages, depth of the page tree, and bytes of content
// streams once decompressed (a FlateDecode bomb inflates a few kilobytes into gigabytes).
const (
	maxPDFPages        = 2000
	maxPDFTreeDepth    = 64
	maxPDFTotalContent = 256 << 20
)

// maxPDFPageContent is a variable only so tests can lower it instead of inflating 64 MiB.
var maxPDFPageContent int64 = 64 << 20

// extractPDF reads the text of every page with github.com/ledongthuc/pdf, the maintained
// fork of rsc.io/pdf: it handles xref tables and streams, FlateDecode and the other common
// filters, and ToUnicode CMaps. Encrypted documents are refused. The parser was written for
// well-formed input and can panic on damaged files: Extract recovers that into an error.
// Pages are found by our own bounded walk of the page tree, because the library's Page(n)
// loops forever on a tree whose Kids point back at an ancestor.
func extractPDF(content []byte) (string, error) {
	r, err := pdf.NewReader(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		return "", fmt.Errorf("cannot read the pdf file: %v", err)
	}
	pages, err := pdfPages(r)
	if err != nil {
		return "", fmt.Errorf("cannot read the pdf file: %v", err)
	}
	if len(pages) == 0 {
		return "", fmt.Errorf("cannot read the pdf file: no pages found")
	}
	var b limitedBuilder
	var total int64
	for i, p := range pages {
		n, err := pdfContentSize(p, maxPDFPageContent)
		if err != nil {
			return "", fmt.Errorf("cannot read the pdf file: page %d: %v", i+1, err)
		}
		if total += n; total > maxPDFTotalContent {
			return "", fmt.Errorf("cannot read the pdf file: content streams expand to more than %d MiB", maxPDFTotalContent>>20)
		}
		text, err := p.GetPlainText(nil) // nil: each page's own fonts; font names are per-page resources
		if err != nil {
			return "", fmt.Errorf("cannot read the pdf file: page %d: %v", i+1, err)
		}
		b.WriteString(strings.TrimSpace(text))
		b.WriteString("\n\n")
		if b.full {
			return "", fmt.Errorf("cannot read the pdf file: %w", errTooMuchText)
		}
	}
	return b.String(), nil
}

// pdfPages lists the pages in document order, refusing trees that are too deep, too large or
// cyclic (a cycle shows up as unbounded depth or node count).
func pdfPages(r *pdf.Reader) ([]pdf.Page, error) {
	var pages []pdf.Page
	visits := 0
	var walk func(v pdf.Value, depth int) error
	walk = func(v pdf.Value, depth int) error {
		visits++
		if depth > maxPDFTreeDepth || visits > 4*maxPDFPages {
			return errors.New("the page tree is too deep, too large or cyclic")
		}
		switch v.Key("Type").Name() {
		case "Pages":
			kids := v.Key("Kids")
			for i := 0; i < kids.Len(); i++ {
				if err := walk(kids.Index(i), depth+1); err != nil {
					return err
				}
			}
		case "Page":
			if len(pages) == maxPDFPages {
				return fmt.Errorf("more than %d pages", maxPDFPages)
			}
			pages = append(pages, pdf.Page{V: v})
		}
		return nil
	}
	root := r.Trailer().Key("Root").Key("Pages")
	if root.IsNull() {
		return nil, errors.New("no page tree")
	}
	return pages, walk(root, 0)
}

// pdfContentSize decompresses a page's content streams without keeping them, to learn their
// size before the library buffers them whole.
func pdfContentSize(p pdf.Page, limit int64) (int64, error) {
	c := p.V.Key("Contents")
	var streams []pdf.Value
	if c.Kind() == pdf.Array {
		for i := 0; i < c.Len(); i++ {
			streams = append(streams, c.Index(i))
		}
	} else if !c.IsNull() {
		streams = append(streams, c)
	}
	var total int64
	for _, s := range streams {
		rc := s.Reader()
		n, err := io.Copy(io.Discard, io.LimitReader(rc, limit-total+1))
		rc.Close()
		if err != nil {
			return 0, err
		}
		if total += n; total > limit {
			return 0, fmt.Errorf("content expands to more than %d MiB", limit>>20)
		}
	}
	return total, nil
}
