// Package knowledge is the retrieval engine behind knowledge bases: it recognises uploaded
// files, extracts their text, cuts it into chunks and ranks chunks against a question. It
// keeps no state on disk and imports nothing from the rest of voiceapi, so the storage and
// HTTP layers can call it from any goroutine and rebuild an Index from stored chunks.
package knowledge

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is the format of a source file, judged from its content and its name.
type Kind string

// The formats voiceapi can extract text from.
const (
	KindText     Kind = "text"
	KindMarkdown Kind = "markdown"
	KindCSV      Kind = "csv"
	KindHTML     Kind = "html"
	KindJSON     Kind = "json"
	KindPDF      Kind = "pdf"
	KindDOCX     Kind = "docx"
)

// ErrUnsupported marks a file whose format voiceapi does not accept (the HTTP layer answers
// 422). Errors returned by Detect wrap it with the reason.
var ErrUnsupported = errors.New("unsupported file")

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// sniffLen bounds how much of a file the textual checks look at, so detection stays cheap
// on a 20 MiB upload; the extractor validates the rest.
const sniffLen = 64 << 10

// binaryMagic names common binary formats so the error says what the file is.
var binaryMagic = []struct {
	magic string
	name  string
}{
	{"\x89PNG\r\n\x1a\n", "PNG image"},
	{"\xff\xd8\xff", "JPEG image"},
	{"GIF87a", "GIF image"},
	{"GIF89a", "GIF image"},
	{"MZ", "Windows executable"},
	{"\x7fELF", "ELF executable"},
	{"\x1f\x8b", "gzip archive"},
	{"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "legacy Office document (.doc/.xls)"},
	{"Rar!", "RAR archive"},
	{"7z\xbc\xaf\x27\x1c", "7-Zip archive"},
}

// Detect judges the format of an uploaded file from its content, using its name to choose
// between textual formats. A binary file that is neither PDF nor DOCX, a name that promises
// a format the content does not have (a ".pdf" that is not a PDF, a ".json" that does not
// parse), and an empty file are unsupported.
func Detect(filename string, content []byte) (Kind, error) {
	if len(content) == 0 {
		return "", unsupported("the file is empty")
	}
	ext := strings.ToLower(filepath.Ext(strings.ReplaceAll(filename, `\`, "/")))

	// Binary containers first: their magic numbers are unambiguous whatever the name says.
	// The PDF header may sit anywhere in the first 1024 bytes (ISO 32000-1 §7.5.2 note).
	if bytes.Contains(content[:min(len(content), 1024)], []byte("%PDF-")) {
		return KindPDF, nil
	}
	if bytes.HasPrefix(content, []byte("PK\x03\x04")) {
		return detectZip(content)
	}
	switch ext {
	case ".pdf":
		return "", unsupported("the name ends in .pdf but the content is not a PDF document")
	case ".docx":
		return "", unsupported("the name ends in .docx but the content is not a DOCX document")
	}
	for _, m := range binaryMagic {
		// "MZ" could start a text file; a real executable has NUL bytes in its header.
		if bytes.HasPrefix(content, []byte(m.magic)) && (m.magic != "MZ" || bytes.IndexByte(content[:min(len(content), 64)], 0) >= 0) {
			return "", unsupported("binary content (%s)", m.name)
		}
	}

	if bytes.HasPrefix(content, []byte("\xff\xfe")) || bytes.HasPrefix(content, []byte("\xfe\xff")) {
		return "", unsupported("UTF-16 text; save the file as UTF-8")
	}
	head := bytes.TrimPrefix(content, []byte("\xef\xbb\xbf"))
	if err := checkText(head); err != nil {
		return "", err
	}
	switch ext {
	case ".md", ".markdown", ".mdown", ".mkd":
		return KindMarkdown, nil
	case ".csv", ".tsv":
		return KindCSV, nil
	case ".html", ".htm", ".xhtml":
		return KindHTML, nil
	case ".json":
		if !json.Valid(head) {
			return "", unsupported("the name ends in .json but the content is not valid JSON")
		}
		return KindJSON, nil
	case ".txt", ".text":
		return KindText, nil
	}
	// No telling name: sniff the content.
	trimmed := bytes.TrimSpace(head)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
		return KindJSON, nil
	}
	if looksLikeHTML(trimmed) {
		return KindHTML, nil
	}
	if _, ok := sniffDelimiter(head, 3); ok {
		return KindCSV, nil
	}
	return KindText, nil
}

// detectZip accepts a zip only if it is a Word document; spreadsheets, presentations and
// plain archives are refused. Only the central directory is read, so a zip bomb costs nothing
// here.
func detectZip(content []byte) (Kind, error) {
	zr, err := zip.NewReader(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		return "", unsupported("a damaged zip archive: %v", err)
	}
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			return KindDOCX, nil
		}
	}
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "xl/") {
			return "", unsupported("a spreadsheet (.xlsx); save it as CSV")
		}
		if strings.HasPrefix(f.Name, "ppt/") {
			return "", unsupported("a presentation (.pptx)")
		}
	}
	return "", unsupported("a zip archive that is not a Word document (no word/document.xml)")
}

// checkText requires valid UTF-8 without NUL bytes and with few control characters, which is
// what separates text from random bytes. Only the head is checked to keep detection cheap,
// except that a rune cut at the sniff boundary is allowed.
func checkText(b []byte) error {
	if len(b) > sniffLen {
		b = b[:sniffLen]
		// Drop a rune cut in half by the boundary (at most UTFMax-1 bytes).
		start := len(b) - 1
		for start > len(b)-utf8.UTFMax && start > 0 && !utf8.RuneStart(b[start]) {
			start--
		}
		if !utf8.FullRune(b[start:]) {
			b = b[:start]
		}
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return unsupported("binary content (NUL bytes)")
	}
	if !utf8.Valid(b) {
		return unsupported("binary content or a text encoding other than UTF-8")
	}
	controls, runes := 0, 0
	for _, r := range string(b) {
		runes++
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' && r != '\f' {
			controls++
		}
	}
	if controls*100 > runes { // more than 1% control characters is not prose
		return unsupported("binary content (control characters)")
	}
	return nil
}

// htmlMarkers are the openings that make a file without a telling name HTML.
var htmlMarkers = []string{"<!doctype html", "<html", "<head", "<body", "<p>", "<div", "<table", "<h1", "<br", "<ul", "<a href"}

// looksLikeHTML reports whether the text starts like an HTML document or carries several of
// its common tags.
func looksLikeHTML(b []byte) bool {
	head := strings.ToLower(string(b[:min(len(b), 4096)]))
	if strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html") {
		return true
	}
	if !strings.HasPrefix(head, "<") {
		return false
	}
	n := 0
	for _, m := range htmlMarkers {
		if strings.Contains(head, m) {
			n++
		}
	}
	return n >= 2
}

// sniffDelimiter finds a delimiter that cuts the first lines of b into the same number (≥ 2)
// of fields on every one of at least minRows rows. It returns ',' when none does.
func sniffDelimiter(b []byte, minRows int) (rune, bool) {
	sample := b[:min(len(b), 16<<10)]
	if i := bytes.LastIndexByte(sample, '\n'); i > 0 && len(sample) < len(b) {
		sample = sample[:i+1]
	}
	for _, d := range []rune{',', ';', '\t', '|'} {
		r := csv.NewReader(bytes.NewReader(sample))
		r.Comma = d
		r.FieldsPerRecord = 0 // every row must have as many fields as the first
		rows, fields, ok := 0, 0, true
		for rows < 50 {
			rec, err := r.Read()
			if err != nil {
				ok = err.Error() == "EOF"
				break
			}
			rows++
			fields = len(rec)
		}
		if ok && rows >= minRows && fields >= 2 {
			return d, true
		}
	}
	return ',', false
}

// ContentType is the MIME type to serve a file of the given kind with.
func ContentType(kind Kind) string {
	switch kind {
	case KindText:
		return "text/plain; charset=utf-8"
	case KindMarkdown:
		return "text/markdown; charset=utf-8"
	case KindCSV:
		return "text/csv; charset=utf-8"
	case KindHTML:
		return "text/html; charset=utf-8"
	case KindJSON:
		return "application/json"
	case KindPDF:
		return "application/pdf"
	case KindDOCX:
		return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	}
	return "application/octet-stream"
}

// maxFilenameBytes is the common file-system limit on one path element.
const maxFilenameBytes = 255

// windowsReserved are device names Windows refuses as file names, whatever the extension.
var windowsReserved = map[string]bool{"CON": true, "PRN": true, "AUX": true, "NUL": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true}

// SanitizeFilename makes a client-supplied name safe to show, to store as metadata and to put
// in a Content-Disposition header: no directories (either slash), no control or reserved
// characters, no leading dots, at most 255 bytes with the extension kept; "file" when
// nothing is left.
func SanitizeFilename(name string) string {
	name = strings.ToValidUTF8(name, "")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r), r == utf8.RuneError:
			return -1
		case strings.ContainsRune(`<>:"|?*`, r):
			return '_'
		case unicode.IsSpace(r):
			return ' '
		}
		return r
	}, name)
	name = strings.TrimLeft(strings.TrimSpace(name), ".")
	name = strings.TrimRight(strings.TrimSpace(name), ". ") // Windows drops trailing dots and spaces
	name = strings.TrimSpace(name)
	if name == "" {
		return "file"
	}
	ext := filepath.Ext(name)
	if len(ext) > 32 || ext == name {
		ext = ""
	}
	base := strings.TrimSuffix(name, ext)
	if windowsReserved[strings.ToUpper(base)] {
		base = "_" + base
	}
	if len(base)+len(ext) > maxFilenameBytes {
		base = truncateUTF8(base, maxFilenameBytes-len(ext))
	}
	if base == "" {
		base = "file"
	}
	return base + ext
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
