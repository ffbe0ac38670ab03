package knowledge

// Scratch of the seventh round: setters for the experiments' variables.

func TermsEN(s string) []string { return analyzeAs(s, english_) }

// SetTranslations installs the table: for each question term, its answer-side terms, most
// probable first, with their probabilities.
func SetTranslations(table map[string][]string, probs map[string][]float64) {
	transTable = map[string][]transTerm{}
	for q, ts := range table {
		for i, t := range ts {
			transTable[q] = append(transTable[q], transTerm{t, probs[q][i]})
		}
	}
}

func SetTranslation(share float64, topK int, minP float64, norm bool) {
	transShare, transTopK, transMinP, transNorm = share, topK, minP, norm
}

func SetTranslationAbsent(on bool) { transAbsent = on }
