package knowledge

// Scratch of the eighth round: setters for the experiments' variables.

type Settings struct {
	K1, B, Heading, Source, Mu, Steep, ChunkTerms float64
	NbrK, NbrBeta                                 float64
}

func GetSettings() Settings {
	return Settings{bm25K1, bm25B, headingWeight, sourceWeight, backgroundChunks, scoreSteepness, backgroundChunkTerms, float64(nbrK), nbrBeta}
}

func SetSettings(s Settings) {
	bm25K1, bm25B, headingWeight, sourceWeight, backgroundChunks, scoreSteepness, backgroundChunkTerms = s.K1, s.B, s.Heading, s.Source, s.Mu, s.Steep, s.ChunkTerms
	nbrK, nbrBeta = int(s.NbrK), s.NbrBeta
}

func SetNeighbours(k int, beta float64, otherSrc bool, minSim float64, flat bool) {
	nbrK, nbrBeta, nbrOtherSrc, nbrMinSim, nbrFlat = k, beta, otherSrc, minSim, flat
}

func SetRegularization(alpha float64) { regAlpha = alpha }

func SetMI(k int, share, maxDF float64, minCo int) {
	miK, miShare, miMaxDF, miMinCo = k, share, maxDF, minCo
}

func SetNecessity(table map[string]float64, mean, pow float64) {
	necTable, necMean, necPow = table, mean, pow
}

func TermsEN(s string) []string { return analyzeAs(s, english_) }
