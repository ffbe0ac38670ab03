package knowledge

import (
	"archive/zip"
	"bytes"
	"errors"
	"math/rand"
	"strings"
	"testing"
)

func mustExtract(t *testing.T, kind Kind, content []byte) string {
	t.Helper()
	text, err := Extract(kind, content)
	if err != nil {
		t.Fatalf("Extract(%s): %v", kind, err)
	}
	return text
}

func TestExtractText(t *testing.T) {
	got := mustExtract(t, KindText, []byte("\xef\xbb\xbfLine one  \r\nLine\t\ttwo\r\n\r\n\r\n\r\nNext paragraph\n"))
	if want := "Line one\nLine two\n\nNext paragraph"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := mustExtract(t, KindMarkdown, []byte("# Title\n\n- item *one*\n")); got != "# Title\n\n- item *one*" {
		t.Errorf("markdown: %q", got)
	}
	if _, err := Extract(KindText, []byte("caf\xe9")); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
	if _, err := Extract(KindText, []byte(" \n\t ")); !errors.Is(err, ErrNoText) {
		t.Errorf("blank text: %v, want ErrNoText", err)
	}
}

func TestExtractCSV(t *testing.T) {
	got := mustExtract(t, KindCSV, []byte("plan,price,notes\nStarter,19,\"monthly, no contract\"\nGrowth,99\n,,\n"))
	want := "plan: Starter; price: 19; notes: monthly, no contract\nplan: Growth; price: 99"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	got = mustExtract(t, KindCSV, []byte("city;hours\nParis;9-17\n"))
	if got != "city: Paris; hours: 9-17" {
		t.Errorf("semicolon csv: %q", got)
	}
	if got := mustExtract(t, KindCSV, []byte("a,,c\n1,2,3,4\n")); got != "a: 1; column 2: 2; c: 3; column 4: 4" {
		t.Errorf("ragged csv: %q", got)
	}
}

func TestExtractHTML(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>Help &amp; FAQ</title>
<style>body { color: red }</style><script>var secret = "do not index";</script></head>
<body><noscript>Enable JavaScript</noscript>
<h1>Opening&nbsp;hours</h1><p>We open at <b>9&nbsp;am</b> &mdash; every   day.</p>
<ul><li>Mon&ndash;Fri</li><li>Sat</li></ul>
<div>caf&eacute; &#233; &#x263A;<br>next line</div>
<pre>  keep
  lines</pre>
<script>document.write("<p>nope</p>")</script>
</body></html>`
	got := mustExtract(t, KindHTML, []byte(page))
	for _, want := range []string{"Help & FAQ", "Opening hours", "We open at 9 am — every day.", "Mon–Fri\nSat", "café é ☺\nnext line", "\n\nkeep\nlines"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
	for _, bad := range []string{"color", "secret", "Enable JavaScript", "nope", "<"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q leaked into %q", bad, got)
		}
	}
	table := mustExtract(t, KindHTML, readFixture(t, "plans.html"))
	if !strings.Contains(table, "Starter | 19 dollars | 500 minutes") {
		t.Errorf("table rows: %q", table)
	}
	// Unclosed tags and stray markup still give text.
	if got := mustExtract(t, KindHTML, []byte("<p>unclosed <b>bold <i>text")); got != "unclosed bold text" {
		t.Errorf("malformed: %q", got)
	}
}

func TestExtractJSON(t *testing.T) {
	got := mustExtract(t, KindJSON, []byte(`{"store": {"name": "Harbour", "open": true, "hours": [{"day": "Mon", "from": 9}], "note": null}, "price": 1.5e2}`))
	want := "store.name: Harbour\nstore.open: true\nstore.hours[0].day: Mon\nstore.hours[0].from: 9\nprice: 1.5e2"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := mustExtract(t, KindJSON, []byte(`["a", "b"]`)); got != "[0]: a\n[1]: b" {
		t.Errorf("array: %q", got)
	}
	if got := mustExtract(t, KindJSON, []byte(`"just a string"`)); got != "just a string" {
		t.Errorf("scalar: %q", got)
	}
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	for _, bad := range []string{`{"a": `, `{"a": 1} {"b": 2}`, deep, `{"a" 1}`} {
		if _, err := Extract(KindJSON, []byte(bad)); err == nil {
			t.Errorf("accepted %.30q", bad)
		}
	}
}

func TestExtractPDF(t *testing.T) {
	got := mustExtract(t, KindPDF, readFixture(t, "returns.pdf"))
	for _, want := range []string{"Returns and refunds", "within 30 days of delivery", "Café", "prepaid label"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
}

func TestExtractDOCX(t *testing.T) {
	got := mustExtract(t, KindDOCX, readFixture(t, "returns.docx"))
	for _, want := range []string{"Returns and refunds\n\nYou may return", "Café orders are non-refundable."} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
	table := mustExtract(t, KindDOCX, readFixture(t, "plans.docx"))
	if !strings.Contains(table, "Business | 99 dollars | 5000 minutes") {
		t.Errorf("table: %q", table)
	}
	doc := `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
<w:p><w:r><w:t>Hello</w:t></w:r><w:r><w:tab/><w:t xml:space="preserve"> world</w:t></w:r></w:p>
<w:p><w:r><w:t>Second &amp; last</w:t><w:br/><w:t>line</w:t></w:r></w:p></w:body></w:document>`
	got = mustExtract(t, KindDOCX, makeZip(t, map[string]string{"word/document.xml": doc}))
	if got != "Hello world\n\nSecond & last\nline" {
		t.Errorf("hand-made docx: %q", got)
	}
}

func TestExtractDOCXZipBomb(t *testing.T) {
	// Zeros deflate about a thousandfold. The limit is lowered to keep the test fast; the
	// claimed size is checked first, then the bytes actually inflated.
	defer func(old int64) { maxDocumentXML = old }(maxDocumentXML)
	maxDocumentXML = 1 << 20
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "word/document.xml", Method: zip.Deflate})
	chunk := make([]byte, 1<<20)
	for i := 0; i < 3; i++ {
		w.Write(chunk)
	}
	zw.Close()
	_, err := Extract(KindDOCX, buf.Bytes())
	if err == nil || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("zip bomb: %v, want a size error", err)
	}
}

// TestExtractBrokenFiles feeds truncated, corrupted and random inputs to every extractor: each
// must return an error or some text, never panic.
func TestExtractBrokenFiles(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	pdf := readFixture(t, "returns.pdf")
	docx := readFixture(t, "returns.docx")
	for _, tc := range []struct {
		kind    Kind
		content []byte
	}{{KindPDF, pdf}, {KindDOCX, docx}, {KindHTML, readFixture(t, "plans.html")}, {KindCSV, []byte("a,b\n1,2\n")}, {KindJSON, []byte(`{"a":[1,{"b":"c"}]}`)}} {
		for _, cut := range []int{1, 8, len(tc.content) / 3, len(tc.content) / 2, len(tc.content) - 10} {
			if cut <= 0 || cut >= len(tc.content) {
				continue
			}
			Extract(tc.kind, tc.content[:cut]) // must not panic
		}
		for i := 0; i < 200; i++ {
			c := bytes.Clone(tc.content)
			for j := 0; j < 1+rng.Intn(20); j++ {
				c[rng.Intn(len(c))] = byte(rng.Intn(256))
			}
			Extract(tc.kind, c)
		}
	}
	// Truncated binaries specifically must fail, with a reason.
	if _, err := Extract(KindPDF, pdf[:len(pdf)/2]); err == nil {
		t.Error("half a PDF extracted without error")
	}
	if _, err := Extract(KindDOCX, docx[:len(docx)/2]); err == nil {
		t.Error("half a DOCX extracted without error")
	}
	if _, err := Extract(KindPDF, []byte("%PDF-1.7\n garbage")); err == nil {
		t.Error("garbage PDF extracted without error")
	}
	if _, err := Extract(KindDOCX, makeZip(t, map[string]string{"word/document.xml": "<w:document><w:p><w:t>unclosed"})); err == nil {
		t.Error("malformed document.xml accepted")
	}
	if _, err := Extract("xlsx", []byte("x")); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unknown kind: %v", err)
	}
}
