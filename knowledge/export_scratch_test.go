package knowledge

// Terms is scratch: the index terms of a text, as the fifth round's harness reads them.
func Terms(s string) []string { t, _ := analyze(s); return t }

func SetIdentifiers(chunkW, queryW float64, join bool) {
	idChunkWeight, idQueryWeight, idJoin = chunkW, queryW, join
}

func SetBackground(share, length float64, missingRare bool) {
	bgShare, bgLen, bgMissingRare = share, length, missingRare
}

func BackgroundSize() int { return len(bgPrior) }

func SetQueryWeighting(power, drop float64) { qwPower, qwDrop = power, drop }

func SetLead(w float64) { leadWeight = w }

func SetBM25L(delta float64) { bm25lDelta = delta }

func IdentifierParts(s string) []string { return identifierParts(s) }

func SetQTF(k3 float64) { qtfK3 = k3 }

func SetLGD(c float64) { lgdC = c }

func SetBigrams(w, minShare float64) { bigramWeight, bigramMin = w, minShare }

func SetBackgroundMu(mu float64) { bgMu = mu }
