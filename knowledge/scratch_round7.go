package knowledge

// Scratch of the seventh round (docs/knowledge-bases.md, "The seventh round"): every
// experiment off by default. Reverted, or made permanent, once the round is decided.

import "slices"

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
	// transAbsent expands only question terms no live chunk of the base holds: the
	// vocabulary gap itself.
	transAbsent = false
)

func expandTranslations(terms []string, weights []float64, lang language, absent func(string) bool) ([]string, []float64) {
	if transShare == 0 || lang != english_ || transTable == nil {
		return terms, weights
	}
	orig := len(terms)
	for i := range orig {
		if transAbsent && !absent(terms[i]) {
			continue
		}
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
