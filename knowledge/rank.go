package knowledge

import "strings"

// scored is a document number with its score.
type scored struct {
	n     int32
	score float64
}

// best keeps the k best documents offered, best first, equal scores ordered by chunk ID.
// Offering costs a comparison with the worst kept for most documents, so a query touching
// thousands of chunks does not sort them all.
type best struct {
	ix    *Index
	k     int
	items []scored
}

func newBest(ix *Index, k int) *best { return &best{ix: ix, k: k, items: make([]scored, 0, k)} }

// better reports whether a ranks before b.
func (b *best) better(a, c scored) bool {
	if a.score != c.score {
		return a.score > c.score
	}
	return strings.Compare(b.ix.docs[a.n].chunk.ID, b.ix.docs[c.n].chunk.ID) < 0
}

// offer considers document n with score s.
func (b *best) offer(n int32, s float64) {
	item := scored{n, s}
	if len(b.items) == b.k {
		if !b.better(item, b.items[b.k-1]) {
			return
		}
		b.items = b.items[:b.k-1]
	}
	i := len(b.items)
	b.items = append(b.items, item)
	for i > 0 && b.better(item, b.items[i-1]) {
		b.items[i] = b.items[i-1]
		i--
	}
	b.items[i] = item
}

// hits returns the kept documents as hits, best first; nil when none.
func (b *best) hits() []Hit {
	if len(b.items) == 0 {
		return nil
	}
	out := make([]Hit, len(b.items))
	for i, it := range b.items {
		c := &b.ix.docs[it.n].chunk
		out[i] = Hit{ChunkID: c.ID, SourceID: c.SourceID, Text: c.Text, Score: it.score, Evidence: EvidenceLexical}
	}
	return out
}
