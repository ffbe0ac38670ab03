package knowledge

import (
	"bytes"
	"errors"
	"fmt"
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

// normalizeText gives every extractor's output the same shape, which the chunker relies on:
// "\n" line ends, runs of spaces collapsed and lines trimmed (layout is noise to retrieval),
// at most one blank line between paragraphs, valid UTF-8. It is one pass without regular
// expressions, since it runs over every byte of every upload.
func normalizeText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	newlines := 0    // line breaks seen since the last visible character
	space := false   // blanks seen since the last visible character
	started := false // something visible has been written
	prev := rune(0)
	for _, r := range s {
		switch r {
		case '\n', '\r':
			if r == '\n' && prev == '\r' { // "\r\n" is one break
				prev = r
				continue
			}
			newlines++
			prev = r
			continue
		case ' ', '\t', '\f', '\v', '\u00a0':
			space = true
			prev = r
			continue
		}
		prev = r
		if started {
			switch {
			case newlines >= 2:
				b.WriteString("\n\n")
			case newlines == 1:
				b.WriteByte('\n')
			case space:
				b.WriteByte(' ')
			}
		}
		newlines, space, started = 0, false, true
		b.WriteRune(r)
	}
	return b.String()
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
