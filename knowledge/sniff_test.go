package knowledge

import (
	"archive/zip"
	"bytes"
	"errors"
	"math/rand"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/files/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// makeZip builds an in-memory zip with the given files.
func makeZip(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDetect(t *testing.T) {
	random := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(random)
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), random[:100]...)
	cases := []struct {
		name    string
		content []byte
		want    Kind // "" means unsupported
	}{
		{"returns.txt", readFixture(t, "returns.txt"), KindText},
		{"notes", []byte("Just some notes.\nOn two lines."), KindText},
		{"README.md", []byte("# Title\n\nSome *text*."), KindMarkdown},
		{"guide.markdown", []byte("Hello"), KindMarkdown},
		{"prices.csv", []byte("plan,price\nstarter,19\n"), KindCSV},
		{"export", []byte("name;city;age\nAda;London;36\nAlan;Wilmslow;41\n"), KindCSV},
		{"plans.html", readFixture(t, "plans.html"), KindHTML},
		{"page", []byte("<!DOCTYPE html><html><body><p>Hi</p></body></html>"), KindHTML},
		{"snippet.txt", []byte("<p>kept as text because the name says so</p>"), KindText},
		{"data.json", []byte(`{"a": [1, 2]}`), KindJSON},
		{"data", []byte(` [{"q": "hours?", "a": "9 to 5"}]`), KindJSON},
		{"returns.pdf", readFixture(t, "returns.pdf"), KindPDF},
		{"scan", readFixture(t, "returns.pdf"), KindPDF},
		{"returns.docx", readFixture(t, "returns.docx"), KindDOCX},
		{"upload.bin", readFixture(t, "plans.docx"), KindDOCX},
		{"bom.txt", []byte("\xef\xbb\xbfwith a byte order mark"), KindText},
		// unsupported
		{"image.png", png, ""},
		{"image.txt", png, ""},
		{"setup.exe", append([]byte("MZ\x90\x00\x03\x00\x00\x00"), random[:200]...), ""},
		{"random.dat", random, ""},
		{"fake.pdf", []byte("this is not a pdf"), ""},
		{"fake.docx", []byte("neither is this a docx"), ""},
		{"archive.zip", makeZip(t, map[string]string{"a.txt": "hello"}), ""},
		{"sheet.xlsx", makeZip(t, map[string]string{"xl/workbook.xml": "<workbook/>", "[Content_Types].xml": "<Types/>"}), ""},
		{"broken.json", []byte(`{"a": `), ""},
		{"nul.txt", []byte("text\x00with a NUL"), ""},
		{"latin1.txt", []byte("caf\xe9 cr\xe8me"), ""},
		{"empty.txt", nil, ""},
		{"notepad.txt", []byte("\xff\xfeh\x00i\x00"), ""},
	}
	for _, c := range cases {
		got, err := Detect(c.name, c.content)
		if c.want == "" {
			if err == nil || !errors.Is(err, ErrUnsupported) {
				t.Errorf("Detect(%q) = %q, %v; want ErrUnsupported", c.name, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Detect(%q) = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestDetectLargeTextCutMidRune(t *testing.T) {
	// The sniff window ends inside a 3-byte rune: the file is still valid text.
	b := []byte(strings.Repeat("a", sniffLen-1) + strings.Repeat("€", 10))
	if k, err := Detect("big.txt", b); err != nil || k != KindText {
		t.Fatalf("got %q, %v", k, err)
	}
}

func TestContentType(t *testing.T) {
	for k, want := range map[Kind]string{
		KindText: "text/plain; charset=utf-8", KindMarkdown: "text/markdown; charset=utf-8",
		KindCSV: "text/csv; charset=utf-8", KindHTML: "text/html; charset=utf-8",
		KindJSON: "application/json", KindPDF: "application/pdf",
		KindDOCX: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		"other":  "application/octet-stream",
	} {
		if got := ContentType(k); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", k, got, want)
		}
	}
}

func TestSanitizeFilename(t *testing.T) {
	long := strings.Repeat("é", 200) + ".pdf" // 404 bytes
	cases := map[string]string{
		"report.pdf":                 "report.pdf",
		"../../etc/passwd":           "passwd",
		`C:\Users\ada\notes.txt`:     "notes.txt",
		".htaccess":                  "htaccess",
		"...":                        "file",
		"":                           "file",
		"a\x00b\nc\x7f.txt":          "abc.txt",
		`what?<is>"this":|*.md`:      "what__is__this____.md",
		"  spaced name .txt  ":       "spaced name .txt",
		"trailing dots...":           "trailing dots",
		"CON.txt":                    "_CON.txt",
		"dir/":                       "file",
		"tab\there.csv":              "tabhere.csv",
		"ünïcødé 東京.docx":            "ünïcødé 東京.docx",
		"bad\xffutf8.txt":            "badutf8.txt",
		"/":                          "file",
		"x/./y/../report final.html": "report final.html",
	}
	for in, want := range cases {
		if got := SanitizeFilename(in); got != want {
			t.Errorf("SanitizeFilename(%q) = %q, want %q", in, got, want)
		}
	}
	got := SanitizeFilename(long)
	if len(got) > 255 || !strings.HasSuffix(got, ".pdf") || !utf8.ValidString(got) {
		t.Errorf("long name: %d bytes, %q", len(got), got[len(got)-8:])
	}
}
