package knowledge

import "math"

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
	vs := vectorScratchPool.Get().(*vectorScratch)
	defer vs.release()
	q := unitVectorInto(vs.q, queryVec)
	if q != nil {
		vs.q = q
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	lex := ix.lexicalLocked(query)
	defer lex.release()
	var m *vectorMatrix
	if q != nil {
		m = ix.matrixLocked(len(q))
	}
	near := vs.similarities(ix, m, q, scanParts(m))
	sim := func(n int32) float64 {
		if d := &ix.docs[n]; m != nil && int(d.dim) == m.dim {
			return float64(vs.sims[d.row])
		}
		return 0
	}
	vecRank := func(n int32) int {
		if d := &ix.docs[n]; m != nil && int(d.dim) == m.dim {
			return int(vs.rank[d.row])
		}
		return 0
	}
	var lexRank map[int32]int
	if f.Method == FuseRRF {
		lexRank = ix.lexicalRanksLocked(lex)
	}
	top := newBest(ix, k)
	consider := func(n int32) {
		l := lex.get(int(n))
		var s float64
		if f.Method == FuseRRF {
			s = rrf(lexRank[n], vecRank(n), w, f.RRFK)
		} else {
			s = min(1, w*sim(n)+(1-w)*l)
		}
		if s > 0 && s >= threshold {
			top.offer(n, s)
		}
	}
	for _, n := range lex.touched {
		consider(n)
	}
	for _, it := range near {
		if n := m.docs[it.row]; lex.get(int(n)) == 0 {
			consider(n) // found by its vector alone
		}
	}
	hits := top.hits()
	for i, it := range top.items {
		switch l, inVec := lex.get(int(it.n)) > 0, vecRank(it.n) > 0; {
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
