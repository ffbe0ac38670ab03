package knowledge

import "math"

// Scratch experiments of the fourth round.
var (
	isfShare       = 0.0
	diversifyCap   = 0 // chunks of one source among the first diversifyTop; 0 off
	diversifyTop   = 3
	diversifyDepth = 1
)

// mixISF mixes a term's chunk idf with its idf over sources, rescaled to the chunk idf's
// range.
func mixISF(idf, n float64, src *sourceScores) float64 {
	if isfShare <= 0 || src.live < 2 {
		return idf
	}
	isf := bm25IDF(src.live, len(src.termSrc))
	scale := bm25IDF(n, 1) / bm25IDF(src.live, 1)
	return (1-isfShare)*idf + isfShare*isf*scale
}

func diversify(hits []Hit, k int) []Hit {
	if diversifyCap <= 0 {
		return hits[:min(k, len(hits))]
	}
	out := make([]Hit, 0, len(hits))
	var deferred []Hit
	per := map[string]int{}
	for _, h := range hits {
		if len(out) < diversifyTop && per[h.SourceID] >= diversifyCap {
			deferred = append(deferred, h)
			continue
		}
		per[h.SourceID]++
		out = append(out, h)
		if len(out) == diversifyTop {
			out = append(out, deferred...)
			deferred = nil
		}
	}
	out = append(out, deferred...)
	return out[:min(k, len(out))]
}

var (
	qlShare = 0.0
	qlMu    = 300.0
)

// queryLikelihoodLocked scores the touched documents by Dirichlet-smoothed query
// likelihood, as the likelihood ratio to the best of them, in sc.touched's order.
func (ix *Index) queryLikelihoodLocked(terms []string, sc *scores) []float64 {
	if qlShare <= 0 || len(sc.touched) == 0 {
		return nil
	}
	out := make([]float64, len(sc.touched))
	pos := map[int32]int{}
	for i, n := range sc.touched {
		pos[n] = i
		out[i] = float64(len(terms)) * math.Log(qlMu/(float64(ix.docs[n].len)+qlMu))
	}
	for _, t := range terms {
		ps := ix.postings[t]
		cf := 0.0
		for _, p := range ps {
			if !ix.docs[p.doc].dead {
				cf += float64(p.tf)
			}
		}
		pc := cf / ix.totalLen
		if pc == 0 {
			continue
		}
		for _, p := range ps {
			if ix.docs[p.doc].dead {
				continue
			}
			out[pos[p.doc]] += math.Log(1 + float64(p.tf)/(qlMu*pc))
		}
	}
	best := math.Inf(-1)
	for _, v := range out {
		best = math.Max(best, v)
	}
	for i, v := range out {
		out[i] = math.Exp(v - best)
	}
	return out
}
