package knowledge

import (
	"strings"
	"unicode"
)

// answerType is the kind of answer a question asks for, read from its question words,
// and the kind of text a chunk holds that could be such an answer.
type answerType uint8

const (
	answerTime     answerType = 1 << iota // a year, a month, a version ("when", "what year")
	answerQuantity                        // a number ("how many", "how much")
)

// answerTypeWeight is how far a chunk that holds the kind of answer a question asks for
// moves towards a score of 1: score + w × (1 − score). Small, so that it reorders chunks
// already close and never lifts an unrelated one. docs/knowledge-bases.md gives the
// measurements it was chosen on.
var answerTypeWeight = 0.0

// questionAnswerType reads the kind of answer a question asks for from its words
// (lowercased, as splitWords returns them). A question that starts with "when", or names
// a year, date or version after "what" or "which", asks for a time; "how many", "how much"
// and their Spanish and French forms ask for a quantity.
func questionAnswerType(words []string) answerType {
	var t answerType
	for i, w := range words {
		prev := ""
		if i > 0 {
			prev = words[i-1]
		}
		switch {
		case i == 0 && (w == "when" || w == "quand"), w == "cuándo":
			t |= answerTime
		case (prev == "what" || prev == "which" || prev == "qué" || prev == "quel" || prev == "quelle") &&
			(w == "year" || w == "date" || w == "version" || w == "versions" || w == "año" || w == "fecha" || w == "versión" || w == "année"):
			t |= answerTime
		case prev == "how" && (w == "many" || w == "much"), w == "cuántos" || w == "cuántas" || w == "cuánto" || w == "cuánta", w == "combien":
			t |= answerQuantity
		}
	}
	return t
}

// months are the month names of the three languages, whose presence marks a date.
var months = setOf(`january february march april june july august september october november december
	enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre
	janvier février mars avril mai juin juillet août septembre octobre novembre décembre`)

// chunkAnswerTypes reports what kinds of answer a chunk's text holds: any number is a
// quantity; a year (1900 to 2099), a month name or a version number ("1.18", "3.5") is a
// time.
func chunkAnswerTypes(text string) answerType {
	var t answerType
	for _, w := range splitWords(text) {
		if hasDigit(w) {
			t |= answerQuantity
			if len(w) == 4 && (w[:2] == "19" || w[:2] == "20") && isDigits(w) {
				t |= answerTime
			}
		} else if months[w] {
			t |= answerTime
		}
	}
	if hasVersionNumber(text) {
		t |= answerTime | answerQuantity
	}
	return t
}

func isDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// hasVersionNumber reports whether text holds digits, a dot and digits ("Go 1.18",
// "Python 3.5"), which splitWords reads as two words.
func hasVersionNumber(text string) bool {
	for i := strings.IndexByte(text, '.'); i >= 0; {
		if i > 0 && i+1 < len(text) && unicode.IsDigit(rune(text[i-1])) && unicode.IsDigit(rune(text[i+1])) {
			return true
		}
		next := strings.IndexByte(text[i+1:], '.')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

// boostAnswerType moves a score towards 1 when the chunk holds the kind of answer the
// question asks for.
func boostAnswerType(score float64, want, has answerType) float64 {
	if want == 0 || want&has == 0 {
		return score
	}
	return score + answerTypeWeight*(1-score)
}
