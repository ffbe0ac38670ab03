package knowledge

// Scratch of the sixth round: setters for the experiments' variables.

type Settings struct {
	K1, B, Heading, Source, Mu, Steep float64
}

func GetSettings() Settings {
	return Settings{bm25K1, bm25B, headingWeight, sourceWeight, backgroundChunks, scoreSteepness}
}

func SetSettings(s Settings) {
	bm25K1, bm25B, headingWeight, sourceWeight, backgroundChunks, scoreSteepness = s.K1, s.B, s.Heading, s.Source, s.Mu, s.Steep
}

func SetModel(name string, c float64) { rankModel, dfrC = name, c }

func LoadDerivations(dir string) (int, error) {
	t, err := loadDerivations(dir)
	derivTable = t
	return len(t), err
}

func SetDerivations(w float64, prefix int, inSource bool) {
	derivWeight, derivPrefix, derivInSource = w, prefix, inSource
}

func Derivations(stem string) []string { return derivTable[stem] }

func Stem(w string) string { return stem(english_, w) }

func SetLeadIns(on, questions bool) { leadIns, leadQuestions = on, questions }
func Terms(s string) []string       { t, _ := analyze(s); return t }

func SetFusion(model string, share float64) { fuseModel, fuseShare = model, share }

func SetNgrams(n int, share float64) { ngramN, ngramShare = n, share }

func LoadVariants(path string, prefix int, minCos float64) (int, error) {
	t, err := loadVariants(path, prefix, minCos)
	derivTable = t
	return len(t), err
}
