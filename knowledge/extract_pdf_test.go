package knowledge

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
	"testing"
	"time"
)

// buildPDF writes a PDF with the given objects (numbered from 1; object 1 is the catalog) and
// a correct cross-reference table.
func buildPDF(objects ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}

func stream(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

func deflate(data []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

const pdfFont = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"

func TestExtractHandMadePDF(t *testing.T) {
	content := []byte("BT /F1 12 Tf 72 720 Td (Parking is free for two hours.) Tj T* [(Ask at ) -250 (the desk.)] TJ ET")
	doc := buildPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		stream("/Filter /FlateDecode", deflate(content)),
		pdfFont,
	)
	if k, err := Detect("parking.pdf", doc); err != nil || k != KindPDF {
		t.Fatalf("Detect: %q %v", k, err)
	}
	got := mustExtract(t, KindPDF, doc)
	if !strings.Contains(got, "Parking is free for two hours.") || !strings.Contains(got, "the desk.") {
		t.Fatalf("got %q", got)
	}
}

func TestExtractPDFCyclicPageTree(t *testing.T) {
	doc := buildPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [2 0 R] /Count 1 >>", // its own child
	)
	done := make(chan error, 1)
	go func() { _, err := Extract(KindPDF, doc); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("cyclic page tree accepted")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cyclic page tree: extraction did not return")
	}
}

func TestExtractPDFDecompressionBomb(t *testing.T) {
	defer func(old int64) { maxPDFPageContent = old }(maxPDFPageContent)
	maxPDFPageContent = 1 << 20
	bomb := deflate(bytes.Repeat([]byte(" "), int(maxPDFPageContent)+1024)) // about 1 KB compressed
	doc := buildPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		stream("/Filter /FlateDecode", bomb),
		pdfFont,
	)
	_, err := Extract(KindPDF, doc)
	if err == nil || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("bomb: %v, want a size error", err)
	}
}

func TestExtractPDFWithoutText(t *testing.T) {
	doc := buildPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>",
		stream("", []byte("0 0 m 100 100 l S")), // a line drawing, like a scanned page: no text
	)
	if _, err := Extract(KindPDF, doc); err != ErrNoText {
		t.Fatalf("got %v, want ErrNoText", err)
	}
}
