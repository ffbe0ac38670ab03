package knowledge

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ErrNoText is returned when a file parses but holds no text to index, such as a scanned PDF
// made only of images.
var ErrNoText = errors.New("no extractable text")

// MaxExtractedBytes caps the text taken from one file. A 20 MiB upload rarely yields more; a
// compressed format that expands far beyond it is treated as a decompression bomb.
const MaxExtractedBytes = 32 << 20

// Extract returns the readable text of a file of the given kind. An unreadable or damaged
// file gives an error whose message can be shown as the source's failure reason; a panic in
// a parser is recovered and returned as an error, so one bad upload cannot stop the server.
func Extract(kind Kind, content []byte) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("cannot read the %s file: parser failure: %v", kind, r)
		}
	}()
	content = bytes.TrimPrefix(content, []byte("\xef\xbb\xbf"))
	switch kind {
	case KindText, KindMarkdown:
		if !utf8.Valid(content) || bytes.IndexByte(content, 0) >= 0 {
			return "", fmt.Errorf("cannot read the %s file: it is not UTF-8 text", kind)
		}
		text = string(content)
	case KindCSV:
		text, err = extractCSV(content)
	case KindHTML:
		text, err = extractHTML(content)
	case KindJSON:
		text, err = extractJSON(content)
	case KindPDF:
		text, err = extractPDF(content)
	case KindDOCX:
		text, err = extractDOCX(content)
	default:
		return "", fmt.Errorf("%w: unknown kind %q", ErrUnsupported, kind)
	}
	if err != nil {
		return "", err
	}
	text = normalizeText(text)
	if text == "" {
		return "", ErrNoText
	}
	return text, nil
}

var (
	spaceRun  = regexp.MustCompile(`[ \t\f\v\x{a0}]+`)
	blankRuns = regexp.MustCompile(`\n{3,}`)
)

// normalizeText gives every extractor's output the same shape, which the chunker relies on:
// "\n" line ends, runs of spaces collapsed and lines trimmed (layout is noise to retrieval),
// at most one blank line between paragraphs, valid UTF-8.
func normalizeText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(spaceRun.ReplaceAllString(l, " "))
	}
	s = strings.Join(lines, "\n")
	s = blankRuns.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}

// limitedBuilder is a strings.Builder that refuses to grow past MaxExtractedBytes.
type limitedBuilder struct {
	strings.Builder
	full bool
}

var errTooMuchText = fmt.Errorf("the file expands to more than %d MiB of text", MaxExtractedBytes>>20)

func (b *limitedBuilder) WriteString(s string) {
	if b.full {
		return
	}
	if b.Len()+len(s) > MaxExtractedBytes {
		b.full = true
		return
	}
	b.Builder.WriteString(s)
}
