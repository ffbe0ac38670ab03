package knowledge

// Scratch of the seventh round (docs/knowledge-bases.md, "The seventh round"): every
// experiment off by default. Reverted, or made permanent, once the round is decided.

import (
	"regexp"
	"slices"
	"strings"
)

// transTerm is an answer-side term with its translation probability from a question word.
type transTerm struct {
	term string
	p    float64
}

// Translation expansion (Berger and Lafferty 1999; Xue, Jeon and Croft 2008): each English
// question term adds its transTopK most probable answer-side translations (other than
// itself, and not already a question term) at transShare × p of their own weight.
var (
	transTable map[string][]transTerm
	transShare = 0.0
	transTopK  = 0
	transMinP  = 0.0
	// transNorm scales a term's translations so that the most probable counts p = 1.
	transNorm = false
)

func expandTranslations(terms []string, weights []float64, lang language) ([]string, []float64) {
	if transShare == 0 || lang != english_ || transTable == nil {
		return terms, weights
	}
	orig := len(terms)
	for i := range orig {
		tr := transTable[terms[i]]
		k := 0
		for _, t := range tr {
			if k >= transTopK || t.p < transMinP {
				break
			}
			if t.term == terms[i] {
				continue
			}
			k++
			w := transShare * t.p
			if transNorm && len(tr) > 0 {
				w = transShare * t.p / tr[0].p
			}
			if j := slices.Index(terms, t.term); j >= 0 {
				if j >= orig {
					weights[j] += w
				}
				continue
			}
			terms = append(terms, t.term)
			weights = append(weights, w)
		}
	}
	return terms, weights
}

// Answer-type evidence: a question asking "when" favours chunks with a year or a version,
// "how many" / "how much" chunks with a number; answerBonus is added to the chunk's
// normalized score.
var (
	answerBonus = 0.0
	// answerKinds limits the evidence to "when" or "number" questions; "" is both.
	answerKinds = ""
)

var (
	whenAnswer   = regexp.MustCompile(`\b(1[89]\d\d|20\d\d)\b|\bv?\d+\.\d+(\.\d+)?\b|(?i)\b(january|february|march|april|june|july|august|september|october|november|december)\b`)
	numberAnswer = regexp.MustCompile(`\d`)
)

// answerTypeOf returns the regexp a question's expected answer matches, or nil.
func answerTypeOf(query string) *regexp.Regexp {
	q := strings.ToLower(strings.TrimSpace(query))
	switch {
	case answerKinds != "number" && (strings.HasPrefix(q, "when ") || strings.Contains(q, " when did ") || strings.Contains(q, "what year") || strings.HasPrefix(q, "cuándo ") || strings.HasPrefix(q, "¿cuándo ")):
		return whenAnswer
	case answerKinds != "when" && (strings.Contains(q, "how many") || strings.Contains(q, "how much") || strings.Contains(q, "how long") || strings.Contains(q, "cuánto") || strings.Contains(q, "cuántos") || strings.Contains(q, "cuántas")):
		return numberAnswer
	}
	return nil
}
