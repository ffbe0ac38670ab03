package knowledge

import (
	"regexp"
	"strings"
)

// whenBonus is what a chunk naming a year, a version or a month adds to its score for a
// question asking when: the words of "When did Go get generic types?" are in every chunk
// about generic types, and what sets the answer apart is a date, which no word of the
// question names. docs/knowledge-bases.md ("The seventh round") gives the measurements it
// was chosen on (0.08 to 0.15 answer the same questions).
const whenBonus = 0.1

// datedText matches a year (1800–2099), a version number ("1.18", "v2.0.1") or a month's
// name. "May" is left out: as a verb it is in most chunks.
var datedText = regexp.MustCompile(`\b(1[89]\d\d|20\d\d)\b|\bv?\d+\.\d+(\.\d+)?\b|(?i)\b(january|february|march|april|june|july|august|september|october|november|december)\b`)

// isDated reports whether a chunk's text names a time a when-question can be answered by.
// It is decided once, when the chunk is indexed.
func isDated(text string) bool { return datedText.MatchString(text) }

// asksWhen reports whether a question asks for a time, in English or Spanish.
func asksWhen(query string) bool {
	q := strings.ToLower(strings.TrimSpace(query))
	q = strings.TrimPrefix(q, "¿")
	return strings.HasPrefix(q, "when ") || strings.Contains(q, " when did ") ||
		strings.Contains(q, "what year") || strings.HasPrefix(q, "cuándo ")
}
