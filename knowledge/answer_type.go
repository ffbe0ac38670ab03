package knowledge

import "strings"

// whenBonus is what a chunk naming a year, a version or a month adds to its score for a
// question asking when: the words of "When did Go get generic types?" are in every chunk
// about generic types, and what sets the answer apart is a date, which no word of the
// question names. docs/knowledge-bases.md ("The seventh round") gives the measurements it
// was chosen on (0.08 to 0.15 answer the same questions).
const whenBonus = 0.1

// months are the month names a dated chunk may name. "May" is left out: as a verb it is in
// most chunks.
var months = []string{"january", "february", "march", "april", "june", "july", "august",
	"september", "october", "november", "december"}

// isDated reports whether a chunk's text names a time a when-question can be answered by:
// a year (1800–2099), a version number ("1.18", "v2.0.1") or a month's name. It is decided
// once, when the chunk is indexed, by one pass over the words (a regular expression made
// rebuilding an index of 10,000 chunks several times slower).
func isDated(text string) bool {
	for i := 0; i < len(text); {
		if !isWordByte(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isWordByte(text[j]) {
			j++
		}
		if datedWord(text[i:j]) || versionAt(text, i, j) {
			return true
		}
		i = j
	}
	return false
}

func isWordByte(c byte) bool { return wordBytes[c] }

// wordBytes are the bytes of a word, as a regular expression's \b sees them; monthInitials
// the first letters of the months, either case.
var wordBytes, monthInitials = func() (w, m [256]bool) {
	for c := range 256 {
		b := byte(c)
		w[c] = b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
	}
	for _, c := range "jfmasondJFMASOND" {
		m[c] = true
	}
	return
}()

func isDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// datedWord reports whether one word is a year or a month's name.
func datedWord(w string) bool {
	if len(w) == 4 && isDigits(w) {
		return w >= "1800" && w <= "2099"
	}
	if len(w) < 4 || len(w) > 9 || !monthInitials[w[0]] {
		return false // most words: no month has that length or first letter
	}
	for _, m := range months {
		if len(w) == len(m) && strings.EqualFold(w, m) {
			return true
		}
	}
	return false
}

// versionAt reports whether the word text[i:j] (digits, or "v" and digits) starts a
// version number: a dot and a digit follow it.
func versionAt(text string, i, j int) bool {
	w := text[i:j]
	if len(w) > 1 && (w[0] == 'v' || w[0] == 'V') {
		w = w[1:]
	}
	return isDigits(w) && j+1 < len(text) && text[j] == '.' && text[j+1] >= '0' && text[j+1] <= '9'
}

// asksWhen reports whether a question asks for a time, in English or Spanish. It compares
// without copying the question: it runs on every query.
func asksWhen(query string) bool {
	q := strings.TrimSpace(query)
	q = strings.TrimPrefix(q, "¿")
	return hasPrefixFold(q, "when ") || containsFold(q, " when did ") ||
		containsFold(q, "what year") || hasPrefixFold(q, "cuándo ")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
