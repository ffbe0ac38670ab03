package knowledge

import (
	"math"
	"sync"
)

// sourceWeight is the share of a chunk's score that comes from its whole source: a source
// about the question as a whole lends its chunks some credit, and a chunk that happens to
// share words with the question in a source about something else loses some.
// docs/knowledge-bases.md gives the measurements it was chosen on.
const sourceWeight = 0.2

// sourceScores scores whole sources for one query by BM25 over sources, each source one
// document (its chunks' terms together). Its arrays are dense by source number and pooled,
// like scores.
type sourceScores struct {
	ix      *Index
	tf      []float64 // the current term's frequency per source
	raw     []float64
	termSrc []int32 // sources holding the current term
	touched []int32 // sources with a raw score
	ideal   float64
	avgLen  float64
	live    float64
}

var sourceScoresPool = sync.Pool{New: func() any { return new(sourceScores) }}

func newSourceScores(ix *Index) *sourceScores {
	s := sourceScoresPool.Get().(*sourceScores)
	s.ix, s.ideal, s.avgLen, s.live = ix, 0, 0, float64(len(ix.bySource))
	if n := len(ix.srcLen); cap(s.tf) < n {
		s.tf, s.raw = make([]float64, n), make([]float64, n)
	} else {
		s.tf, s.raw = s.tf[:n], s.raw[:n]
	}
	for _, l := range ix.srcLen {
		s.avgLen += l
	}
	if s.live > 0 {
		s.avgLen /= s.live
	}
	if s.avgLen <= 0 {
		s.avgLen = 1
	}
	return s
}

// count adds an occurrence count of the current term in a chunk of source src.
func (s *sourceScores) count(src int32, tf float64) {
	if s.tf[src] == 0 {
		s.termSrc = append(s.termSrc, src)
	}
	s.tf[src] += tf
}

// endTerm scores the current term over the sources that hold it.
func (s *sourceScores) endTerm() {
	df := float64(len(s.termSrc))
	idf := math.Log(1 + (s.live-df+0.5)/(df+0.5))
	s.ideal += idf
	for _, src := range s.termSrc {
		tf := s.tf[src]
		if s.raw[src] == 0 {
			s.touched = append(s.touched, src)
		}
		s.raw[src] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*s.ix.srcLen[src]/s.avgLen))
		s.tf[src] = 0
	}
	s.termSrc = s.termSrc[:0]
}

// score is a source's normalized score in [0, 1].
func (s *sourceScores) score(src int32) float64 { return normalizeScore(s.raw[src], s.ideal) }

// release zeroes what was written and returns the arrays to the pool.
func (s *sourceScores) release() {
	for _, src := range s.touched {
		s.raw[src] = 0
	}
	s.touched, s.ix = s.touched[:0], nil
	sourceScoresPool.Put(s)
}
