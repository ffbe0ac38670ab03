package knowledge

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fuzzMaxInput caps one fuzz input: the parsers are linear or close to it, so larger inputs
// only slow the search down; the 20 MiB upload limit is the HTTP layer's.
const fuzzMaxInput = 256 << 10

// fuzzMaxTime bounds Detect plus Extract on one capped input: a parser that loops on a
// crafted file must show up as a failure, not as a stalled fuzzer.
const fuzzMaxTime = 10 * time.Second

// FuzzDetectExtract feeds arbitrary bytes and names through Detect and then Extract with
// the detected kind, as an upload goes: no panic escapes (Extract recovers its parsers'
// panics into errors, so the process must survive), the answer comes in bounded time and
// is the same twice, a detected kind is a known one, and extracted text is non-empty,
// valid UTF-8, normalized and within MaxExtractedBytes.
func FuzzDetectExtract(f *testing.F) {
	files, _ := filepath.Glob("testdata/files/*.*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) <= fuzzMaxInput {
			f.Add(filepath.Base(p), b)
		}
	}
	f.Add("notes.txt", []byte("Opening hours: 9 to 5.\r\n\r\n\r\nClosed on Sundays."))
	f.Add("data.json", []byte(`{"faq":[{"q":"Refunds?","a":"Within 30 days."}]}`))
	f.Add("t.csv", []byte("name,price\nBasic,10\n\"Pro, yearly\",100\n"))
	f.Add("x.pdf", []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF"))
	f.Add("x.docx", []byte("PK\x03\x04broken zip"))
	f.Fuzz(func(t *testing.T, name string, content []byte) {
		if len(content) > fuzzMaxInput {
			return
		}
		type result struct {
			kind Kind
			text string
			derr error
			eerr error
		}
		run := func() result {
			var r result
			r.kind, r.derr = Detect(name, content)
			if r.derr == nil {
				r.text, r.eerr = Extract(r.kind, content)
			}
			return r
		}
		done := make(chan result, 1)
		go func() { done <- run() }()
		var r result
		select {
		case r = <-done:
		case <-time.After(fuzzMaxTime):
			t.Fatalf("Detect+Extract of %d bytes named %q took over %v", len(content), name, fuzzMaxTime)
		}
		if again := run(); again.kind != r.kind || again.text != r.text || errString(again.derr) != errString(r.derr) || errString(again.eerr) != errString(r.eerr) {
			t.Fatalf("two runs differ: %+v / %+v", r, again)
		}
		if r.derr != nil {
			if !errors.Is(r.derr, ErrUnsupported) || r.kind != "" {
				t.Fatalf("Detect refused with %q (kind %q), not an ErrUnsupported", r.derr, r.kind)
			}
			return
		}
		if ContentType(r.kind) == "" {
			t.Fatalf("Detect returned kind %q, which has no content type", r.kind)
		}
		if r.eerr != nil {
			if r.text != "" || r.eerr.Error() == "" {
				t.Fatalf("Extract failed (%v) but returned text", r.eerr)
			}
			return
		}
		switch {
		case r.text == "":
			t.Fatal("Extract succeeded with no text")
		case !utf8.ValidString(r.text):
			t.Fatal("extracted text is not valid UTF-8")
		case len(r.text) > MaxExtractedBytes:
			t.Fatalf("extracted %d bytes, over the %d cap", len(r.text), MaxExtractedBytes)
		case normalizeText(r.text) != r.text:
			t.Fatalf("extracted text is not normalized: %q", r.text)
		case strings.HasPrefix(r.text, "\n") || strings.HasSuffix(r.text, "\n"):
			t.Fatalf("extracted text has blank edges: %q", r.text)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
