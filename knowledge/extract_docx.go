package knowledge

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// maxDocumentXML caps the decompressed size of word/document.xml. Real documents are a few
// megabytes at most. The cap is checked against the size the archive claims and again
// against the bytes actually inflated, so a crafted header cannot smuggle a zip bomb past
// it. It is a variable only so tests can lower it.
var maxDocumentXML int64 = 64 << 20

// extractDOCX reads the paragraphs of word/document.xml: text runs (w:t), tabs and breaks,
// one line per paragraph and one line per table row with its cells separated by " | ".
func extractDOCX(content []byte) (string, error) {
	zr, err := zip.NewReader(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		return "", fmt.Errorf("cannot read the docx file: %v", err)
	}
	var doc *zip.File
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			doc = f
			break
		}
	}
	if doc == nil {
		return "", fmt.Errorf("cannot read the docx file: word/document.xml is missing")
	}
	if doc.UncompressedSize64 > uint64(maxDocumentXML) {
		return "", fmt.Errorf("cannot read the docx file: word/document.xml is larger than %d MiB", maxDocumentXML>>20)
	}
	rc, err := doc.Open()
	if err != nil {
		return "", fmt.Errorf("cannot read the docx file: %v", err)
	}
	defer rc.Close()
	lr := &io.LimitedReader{R: rc, N: maxDocumentXML + 1}
	text, err := docxText(lr)
	if lr.N <= 0 {
		return "", fmt.Errorf("cannot read the docx file: word/document.xml expands to more than %d MiB", maxDocumentXML>>20)
	}
	if err != nil {
		return "", fmt.Errorf("cannot read the docx file: %v", err)
	}
	return text, nil
}

// The WordprocessingML namespace; elements are matched by local name and this space so a
// document using a different prefix still reads.
const wordNS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

func docxText(r io.Reader) (string, error) {
	dec := xml.NewDecoder(r)
	dec.Strict = false
	var b limitedBuilder
	inText := false
	cellsInRow := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Space != wordNS && t.Name.Space != "" {
				continue
			}
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				b.WriteString("\t")
			case "br", "cr":
				b.WriteString("\n")
			case "tr":
				cellsInRow = 0
			case "tc":
				if cellsInRow > 0 {
					b.WriteString(" | ")
				}
				cellsInRow++
			}
		case xml.EndElement:
			if t.Name.Space != wordNS && t.Name.Space != "" {
				continue
			}
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				if cellsInRow == 0 { // inside a table cell the row ends the line
					b.WriteString("\n\n")
				} else {
					b.WriteString(" ")
				}
			case "tr":
				b.WriteString("\n")
				cellsInRow = 0
			case "tbl":
				b.WriteString("\n")
			}
		case xml.CharData:
			if inText {
				b.WriteString(string(t))
			}
		}
	}
	if b.full {
		return "", errTooMuchText
	}
	return b.String(), nil
}
