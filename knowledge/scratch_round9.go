package knowledge

// Scratch of the ninth round (docs/knowledge-bases.md, "The ninth round"): the features of
// today's top candidates for a learned re-ranker. Reverted with the round.

import (
	"math"
	"slices"
)

// ScratchFeatureNames names the features ScratchCandidates returns, in order.
var ScratchFeatureNames = []string{
	"score",      // today's final score
	"chunk",      // the chunk's normalized BM25 (before the when-bonus)
	"source",     // the whole-source evidence
	"when",       // 1 when the when-bonus was added
	"localchunk", // the chunk's normalized BM25 with the base's own idf (no background prior)
	"coverage",   // share of the question's idf mass the chunk holds
	"headcov",    // share of the question's idf mass in its title and headings
	"density",    // matched distinct terms / the shortest window of the text holding them
	"logspan",    // log of that window's length (0 when under two terms)
	"first",      // 1 for the first chunk of its source
	"relpos",     // its place in its source, 0 to 1
	"loglen",     // log of its weighted length
	"adjacent",   // the best adjacent chunk's final score
	"srcrank",    // 1 / the rank of its source among the sources by source evidence
	"exact",      // share of the question words it holds exactly (unstemmed), of those it holds by stem
	"invrank",    // 1 / today's rank
	"matched",    // number of distinct question terms it holds
}

// ScratchCandidate is one of today's top candidates with its features.
type ScratchCandidate struct {
	ChunkID, SourceID, Text string
	F                       []float64
}

// ScratchCandidates returns today's top n chunks for query, in today's order, with their
// features (unstandardized).
func (ix *Index) ScratchCandidates(query string, n int) []ScratchCandidate {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	sc := ix.lexicalLocked(query)
	defer sc.release()
	top := newBest(ix, n)
	for _, d := range sc.touched {
		top.offer(d, sc.score[d])
	}
	qterms, lang := ix.queryTerms(query)
	var terms []string
	for _, t := range qterms {
		if !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	// surface forms of the question's words, by term
	surface := map[string][]string{}
	for _, w := range splitWords(query) {
		if ts := termsOf([]string{w}, lang); len(ts) == 1 {
			surface[ts[0]] = append(surface[ts[0]], w)
		}
	}
	live := float64(ix.live)
	avgLen := ix.totalLen / live
	idf := make([]float64, len(terms))
	local := make([]float64, len(terms))
	ideal, localIdeal := 0.0, 0.0
	for i, t := range terms {
		df := 0
		for _, p := range ix.postings[t] {
			if !ix.docs[p.doc].dead {
				df++
			}
		}
		idf[i] = termIDF(t, live, df, lang)
		local[i] = math.Log(1 + (live-float64(df)+0.5)/(float64(df)+0.5))
		ideal += idf[i]
		localIdeal += local[i]
	}
	// source evidence of every touched source, for the source's rank
	srcScore := map[int32]float64{}
	when := asksWhen(query)
	chunkPart := func(d *doc) (float64, float64) {
		raw, lraw := 0.0, 0.0
		for i, t := range terms {
			for _, tc := range d.terms {
				if tc.term == t {
					tf := float64(tc.count)
					f := tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(d.len)/avgLen))
					raw += idf[i] * f
					lraw += local[i] * f
				}
			}
		}
		return normalizeScore(raw, ideal), normalizeScore(lraw, localIdeal)
	}
	for _, dn := range sc.touched {
		d := &ix.docs[dn]
		if _, ok := srcScore[d.src]; ok {
			continue
		}
		c, _ := chunkPart(d)
		if when && d.dated {
			c = min(1, c+whenBonus)
		}
		srcScore[d.src] = (sc.score[dn] - (1-sourceWeight)*c) / sourceWeight
	}
	var out []ScratchCandidate
	for rank, it := range top.items {
		d := &ix.docs[it.n]
		c, lc := chunkPart(d)
		f := make([]float64, len(ScratchFeatureNames))
		f[0] = it.score
		f[1] = c
		wb := 0.0
		if when && d.dated {
			wb = 1
			c = min(1, c+whenBonus)
		}
		f[2] = srcScore[d.src]
		f[3] = wb
		f[4] = lc
		held, head := 0.0, 0.0
		matched := map[string]bool{}
		for i, t := range terms {
			for _, tc := range d.terms {
				if tc.term == t {
					held += idf[i]
					matched[t] = true
				}
			}
			if slices.Contains(d.head, t) {
				head += idf[i]
			}
		}
		if ideal > 0 {
			f[5], f[6] = held/ideal, head/ideal
		}
		// shortest window of the text holding every matched term that occurs in the text
		words := splitWords(d.chunk.Text)
		toks := termsOf(slices.Clone(words), d.lang)
		inText := map[string]bool{}
		for _, t := range toks {
			if matched[t] {
				inText[t] = true
			}
		}
		need := len(inText)
		if need >= 2 {
			count := map[string]int{}
			have, lo, bestSpan := 0, 0, len(toks)+1
			for hi, t := range toks {
				if !inText[t] {
					continue
				}
				if count[t] == 0 {
					have++
				}
				count[t]++
				for have == need {
					if inText[toks[lo]] {
						if hi-lo+1 < bestSpan {
							bestSpan = hi - lo + 1
						}
						count[toks[lo]]--
						if count[toks[lo]] == 0 {
							have--
						}
					}
					lo++
				}
			}
			f[7] = float64(need) / float64(bestSpan)
			f[8] = math.Log(float64(bestSpan))
		} else if need == 1 {
			f[7] = 1
		}
		if d.pos == 0 {
			f[9] = 1
		}
		if of := len(ix.bySource[d.chunk.SourceID]); of > 1 {
			f[10] = float64(d.pos) / float64(of-1)
		}
		f[11] = math.Log(1 + float64(d.len))
		ids := ix.bySource[d.chunk.SourceID]
		if k := slices.Index(ids, it.n); k >= 0 {
			if k > 0 {
				f[12] = max(f[12], sc.get(int(ids[k-1])))
			}
			if k+1 < len(ids) {
				f[12] = max(f[12], sc.get(int(ids[k+1])))
			}
		}
		r := 1
		for _, s := range srcScore {
			if s > f[2]+1e-12 {
				r++
			}
		}
		f[13] = 1 / float64(r)
		lower := map[string]bool{}
		for _, w := range words {
			lower[w] = true
		}
		exact, byStem := 0, 0
		for t, ws := range surface {
			if !matched[t] {
				continue
			}
			for _, w := range ws {
				byStem++
				if lower[w] {
					exact++
				}
			}
		}
		if byStem > 0 {
			f[14] = float64(exact) / float64(byStem)
		}
		f[15] = 1 / float64(rank+1)
		f[16] = float64(len(matched))
		out = append(out, ScratchCandidate{ChunkID: d.chunk.ID, SourceID: d.chunk.SourceID, Text: d.chunk.Text, F: f})
	}
	return out
}
