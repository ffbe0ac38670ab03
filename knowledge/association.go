package knowledge

import (
	"math"
	"slices"
)

// Term association: words of the knowledge base that keep company with a question's rare
// words (they appear in the same chunks far more often than chance) stand in for them at a
// small weight, so that a chunk that says "type parameters" is found for "generics" when
// the two keep company elsewhere in the same knowledge base. Learned from the index itself;
// no model or word list.
var (
	// associationWeight is an associated term's share of its own idf; 0 turns it off.
	associationWeight = 0.0
	// associationMin is the least association (co-occurrences over the geometric mean of
	// the two words' chunk counts, the Ochiai coefficient) a word needs to stand in.
	associationMin = 0.5
	// associationPerTerm is how many words may stand in for one question word.
	associationPerTerm = 3
)

// associationMaxDF bounds the question words that get associates to those in at most
// this share of the chunks: a common word keeps company with everything, and its chunks
// would take long to read.
const associationMaxDF = 0.05

// associationMinCo is the least number of chunks the two words must share: one shared
// chunk is a coincidence.
const associationMinCo = 2

type expansion struct {
	term   string
	weight float64
}

// associatedLocked returns, for each of the query's rare terms, the terms most associated
// with it, weighted by associationWeight × association × their idf. Query terms are not
// their own associates.
func (ix *Index) associatedLocked(terms []string) []expansion {
	if associationWeight <= 0 {
		return nil
	}
	n := float64(ix.live)
	var out []expansion
	co := map[string]int{}
	for _, t := range terms {
		ps := ix.postings[t]
		df := ix.liveDF(ps)
		if df == 0 || float64(df) > math.Max(associationMaxDF*n, 2) {
			continue
		}
		clear(co)
		for _, p := range ps {
			d := &ix.docs[p.doc]
			if d.dead {
				continue
			}
			for _, tc := range d.terms {
				if !slices.Contains(terms, tc.term) {
					co[tc.term]++
				}
			}
		}
		var cands []expansion
		for u, c := range co {
			if c < associationMinCo {
				continue
			}
			dfU := ix.liveDF(ix.postings[u])
			a := float64(c) / math.Sqrt(float64(df)*float64(dfU))
			if a < associationMin {
				continue
			}
			cands = append(cands, expansion{u, a * bm25IDF(n, dfU)})
		}
		slices.SortFunc(cands, func(a, b expansion) int {
			if a.weight != b.weight {
				if a.weight > b.weight {
					return -1
				}
				return 1
			}
			if a.term < b.term {
				return -1
			}
			return 1
		})
		for _, e := range cands[:min(len(cands), associationPerTerm)] {
			out = append(out, expansion{e.term, associationWeight * e.weight})
		}
	}
	return out
}

// liveDF is the number of live documents among postings.
func (ix *Index) liveDF(ps []posting) int {
	df := 0
	for _, p := range ps {
		if !ix.docs[p.doc].dead {
			df++
		}
	}
	return df
}
