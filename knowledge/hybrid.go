package knowledge

import (
	"math"
	"runtime"
	"sync"
)

// Evidence names what found a chunk: its words (lexical), its embedding's closeness to the
// question's (vector), or both.
type Evidence string

// The kinds of evidence a hit can have.
const (
	EvidenceLexical Evidence = "lexical"
	EvidenceVector  Evidence = "vector"
	EvidenceBoth    Evidence = "both"
)

// Fusion is how a hybrid search combines the lexical and the vector ranking.
type Fusion struct {
	// Method is FuseLinear or FuseRRF.
	Method string
	// VectorWeight is the vector side's share, in [0, 1]: of the score (linear) or of the
	// rank votes (RRF).
	VectorWeight float64
	// RRFK is reciprocal rank fusion's constant: a document at rank r gets 1/(RRFK+r).
	RRFK int
}

// Fusion methods.
const (
	// FuseLinear scores weight·similarity + (1−weight)·lexical, similarity being the cosine
	// clamped at 0: a blend of two calibrated scores, so a threshold keeps its meaning.
	FuseLinear = "linear"
	// FuseRRF scores Σ weight/(k+rank) over the two rankings, scaled so that a chunk first
	// in both scores 1.
	FuseRRF = "rrf"
)

// DefaultFusion is the fusion retrieval uses; docs/knowledge-bases.md gives the
// measurements it was chosen on.
var DefaultFusion = Fusion{Method: FuseLinear, VectorWeight: 0.5}

// vectorCandidates is how many of the chunks closest to the question count as found by
// the vector side: its ranking for RRF, and the chunks credited with vector evidence.
const vectorCandidates = 50

// SearchHybrid ranks chunks by the lexical and the vector evidence together, fused as f
// says. Chunks without a vector, or with one of another dimension, count only lexically.
// Results follow Search's rules (at most k, none below threshold, best first, ties by chunk
// ID), and each hit says which evidence found it: lexical when it shares a word with the
// question, vector when it is among the 50 chunks closest to the question, both when both.
func (ix *Index) SearchHybrid(query string, queryVec []float32, k int, threshold float64, f Fusion) []Hit {
	if k < 1 {
		return nil
	}
	w := f.VectorWeight
	if w < 0 || w > 1 || math.IsNaN(w) {
		w = DefaultFusion.VectorWeight
	}
	q := unitVector(queryVec)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	lex := ix.lexicalLocked(query)
	defer lex.release()
	sims := ix.similaritiesLocked(q)
	defer sims.release()
	near := newBest(ix, vectorCandidates)
	for n := range ix.docs {
		if s := sims.score[n]; s > 0 {
			near.offer(int32(n), s)
		}
	}
	vecRank := make(map[int32]int, len(near.items))
	for i, it := range near.items {
		vecRank[it.n] = i + 1
	}
	var lexRank map[int32]int
	if f.Method == FuseRRF {
		lexRank = ix.lexicalRanksLocked(lex)
	}
	top := newBest(ix, k)
	consider := func(n int32) {
		if ix.docs[n].dead {
			return
		}
		l, inVec := lex.get(int(n)), vecRank[n] > 0
		if l == 0 && !inVec {
			return // a faint similarity outside the candidates is no evidence
		}
		var s float64
		if f.Method == FuseRRF {
			s = rrf(lexRank[n], vecRank[n], w, f.RRFK)
		} else {
			s = min(1, w*sims.score[n]+(1-w)*l)
		}
		if s > 0 && s >= threshold {
			top.offer(n, s)
		}
	}
	for _, n := range lex.touched {
		consider(n)
	}
	for _, it := range near.items {
		if lex.get(int(it.n)) == 0 {
			consider(it.n)
		}
	}
	hits := top.hits()
	for i, it := range top.items {
		switch l, inVec := lex.get(int(it.n)) > 0, vecRank[it.n] > 0; {
		case l && inVec:
			hits[i].Evidence = EvidenceBoth
		case inVec:
			hits[i].Evidence = EvidenceVector
		default:
			hits[i].Evidence = EvidenceLexical
		}
	}
	return hits
}

// rrf is the fused score of a document at the given ranks (0: not ranked), scaled to 1 for
// a document first in both rankings.
func rrf(lexRank, vecRank int, w float64, k int) float64 {
	if k <= 0 {
		k = 60
	}
	s := 0.0
	if lexRank > 0 {
		s += (1 - w) / float64(k+lexRank)
	}
	if vecRank > 0 {
		s += w / float64(k+vecRank)
	}
	return s * float64(k+1)
}

// lexicalRanksLocked ranks the documents with a lexical score, best first from 1.
func (ix *Index) lexicalRanksLocked(lex *scores) map[int32]int {
	all := newBest(ix, len(lex.touched))
	for _, n := range lex.touched {
		all.offer(n, lex.score[n])
	}
	out := make(map[int32]int, len(all.items))
	for i, it := range all.items {
		out[it.n] = i + 1
	}
	return out
}

// similaritiesLocked computes every live document's cosine similarity with the query
// vector q, clamped at 0: a negative cosine means unrelated, not "less than unrelated".
// The caller must release the result.
func (ix *Index) similaritiesLocked(q []float32) *scores {
	sc := newScores(len(ix.docs))
	if q == nil {
		return sc
	}
	// The dot products are the cost of a hybrid query; a large index spreads them over
	// the CPUs, each writing its own range of the dense scores.
	parts := min(runtime.GOMAXPROCS(0), len(ix.docs)/2048)
	if parts <= 1 {
		ix.similarityRange(q, sc.score, 0, len(ix.docs))
	} else {
		var wg sync.WaitGroup
		per := (len(ix.docs) + parts - 1) / parts
		for lo := 0; lo < len(ix.docs); lo += per {
			wg.Go(func() { ix.similarityRange(q, sc.score, lo, min(len(ix.docs), lo+per)) })
		}
		wg.Wait()
	}
	for n, s := range sc.score {
		if s > 0 {
			sc.touched = append(sc.touched, int32(n))
		}
	}
	return sc
}

// similarityRange writes the clamped similarities of documents lo to hi into score.
func (ix *Index) similarityRange(q []float32, score []float64, lo, hi int) {
	for n := lo; n < hi; n++ {
		d := &ix.docs[n]
		if d.dead || len(d.unit) != len(q) {
			continue
		}
		if s := min(1, dot(q, d.unit)); s > 0 {
			score[n] = s
		}
	}
}

// unitVector returns v scaled to length 1, nil for an empty, zero or non-finite vector.
// Documents keep their vectors unit-scaled, so a similarity is one dot product.
func unitVector(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return nil
	}
	n := float32(1 / math.Sqrt(s))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * n
	}
	return out
}

// dot is the dot product of two vectors of equal length, eight lanes at a time (the
// compiler drops the bounds checks of a loop over equal-length slices). Signed bytes
// instead of float32 were measured at half the speed: the multiply, not the memory, is
// the cost (docs/performance.md).
func dot(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		x, y := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		s4 += x[4] * y[4]
		s5 += x[5] * y[5]
		s6 += x[6] * y[6]
		s7 += x[7] * y[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64((s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7))
}
