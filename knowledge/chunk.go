package knowledge

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Default chunk geometry. About 800 characters is a paragraph or two: long enough to carry an
// answer with its context, short enough that several fit in a prompt. The overlap keeps a
// sentence that straddles a cut findable from either side.
const (
	DefaultChunkSize    = 800
	DefaultChunkOverlap = 100
)

// ChunkOptions sets the target size of chunks and how much consecutive chunks share, both in
// characters (runes). Zero values take the defaults; a negative Overlap means none.
type ChunkOptions struct {
	Size    int
	Overlap int
}

// unit is an indivisible piece of text no longer than the chunk size, with the separator
// that joins it to the unit before it.
type unit struct {
	text string
	sep  string
	n    int // length in runes
}

var paragraphBreak = regexp.MustCompile(`\n[ \t]*\n\s*`)

// ChunkText cuts text into chunks of at most opts.Size characters, preferring to cut between
// paragraphs, then between lines, then between sentences, then between words; a word longer
// than a chunk is cut between runes, never inside one. Each chunk after the first starts with
// up to opts.Overlap characters of whole pieces from the end of the one before. The result
// depends only on the input: the same text always gives the same chunks.
func ChunkText(text string, opts ChunkOptions) []string {
	size := opts.Size
	if size <= 0 {
		size = DefaultChunkSize
	}
	overlap := opts.Overlap
	if overlap == 0 {
		overlap = DefaultChunkOverlap
	}
	overlap = max(0, min(overlap, size/2)) // more would make chunks mostly repetition
	text = strings.TrimSpace(strings.ReplaceAll(strings.ToValidUTF8(text, "\uFFFD"), "\r\n", "\n"))
	if text == "" {
		return nil
	}
	units := splitUnits(text, "", size, 0)
	return pack(units, size, overlap)
}

// splitUnits cuts text at the separator of the given level, recursing to finer levels for
// pieces that are still too long. Levels: paragraphs, lines, sentences, words, runes.
func splitUnits(text, sep string, size, level int) []unit {
	n := utf8.RuneCountInString(text)
	if n <= size {
		return []unit{{text: text, sep: sep, n: n}}
	}
	var parts []string
	var join string
	switch level {
	case 0:
		parts, join = paragraphBreak.Split(text, -1), "\n\n"
	case 1:
		parts, join = strings.Split(text, "\n"), "\n"
	case 2:
		parts, join = splitSentences(text), " "
	case 3:
		parts, join = strings.Fields(text), " "
	default:
		return splitRunes(text, sep, size)
	}
	var out []unit
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		s := join
		if len(out) == 0 {
			s = sep
		}
		out = append(out, splitUnits(p, s, size, level+1)...)
	}
	return out
}

// splitRunes cuts a piece with no usable boundary (a very long word or URL) every size runes.
func splitRunes(text, sep string, size int) []unit {
	var out []unit
	for text != "" {
		i, n := 0, 0
		for i < len(text) && n < size {
			_, w := utf8.DecodeRuneInString(text[i:])
			i += w
			n++
		}
		out = append(out, unit{text: text[:i], sep: sep, n: n})
		text, sep = text[i:], ""
	}
	return out
}

// splitSentences cuts after ".", "!", "?" or "…" (with closing quotes or brackets) when
// whitespace follows. Abbreviations sometimes get cut; the chunk packer joins the pieces back
// whenever they fit, so the cost is small.
func splitSentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		i += w
		if r != '.' && r != '!' && r != '?' && r != '…' && r != '。' {
			continue
		}
		end := i
		for end < len(text) {
			c, cw := utf8.DecodeRuneInString(text[end:])
			if !strings.ContainsRune(`"')]”’»`, c) {
				break
			}
			end += cw
		}
		next, _ := utf8.DecodeRuneInString(text[end:])
		if end < len(text) && !unicode.IsSpace(next) && r != '。' {
			continue
		}
		out = append(out, text[start:end])
		start, i = end, end
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// pack joins consecutive units into chunks of at most size runes, seeding each new chunk
// with the trailing units of the previous one that fit in the overlap.
func pack(units []unit, size, overlap int) []string {
	var chunks []string
	var cur []unit
	curLen := 0
	joinedLen := func(us []unit) int {
		n := 0
		for i, u := range us {
			if i > 0 {
				n += utf8.RuneCountInString(u.sep)
			}
			n += u.n
		}
		return n
	}
	emit := func() {
		var b strings.Builder
		for i, u := range cur {
			if i > 0 {
				b.WriteString(u.sep)
			}
			b.WriteString(u.text)
		}
		chunks = append(chunks, b.String())
	}
	for _, u := range units {
		add := u.n
		if len(cur) > 0 {
			add += utf8.RuneCountInString(u.sep)
		}
		if len(cur) > 0 && curLen+add > size {
			emit()
			// Carry whole trailing units into the next chunk, as many as fit the overlap
			// and still leave room for the unit that did not fit.
			k := len(cur)
			for k > 0 && joinedLen(cur[k-1:]) <= overlap {
				k--
			}
			tail := append([]unit(nil), cur[k:]...)
			for len(tail) > 0 && joinedLen(tail)+utf8.RuneCountInString(u.sep)+u.n > size {
				tail = tail[1:]
			}
			cur = tail
			curLen = joinedLen(cur)
			add = u.n
			if len(cur) > 0 {
				add += utf8.RuneCountInString(u.sep)
			}
		}
		cur = append(cur, u)
		curLen += add
	}
	if len(cur) > 0 {
		emit()
	}
	return chunks
}
