package knowledge

// SetAnswerTypeWeight is scratch: the round's experiments vary it.
func SetAnswerTypeWeight(w float64) { answerTypeWeight = w }

func SetAssociation(w, minA float64, per int) {
	associationWeight, associationMin, associationPerTerm = w, minA, per
}

func SetPrefix(w float64, n int, all bool) { prefixWeight, prefixLen, prefixAllTerm = w, n, all }

func SetISF(m float64)               { isfShare = m }
func SetDiversify(c, top, depth int) { diversifyCap, diversifyTop, diversifyDepth = c, top, depth }

func SetQL(m, mu float64) { qlShare, qlMu = m, mu }

func Terms(s string) []string { t, _ := analyze(s); return t }
