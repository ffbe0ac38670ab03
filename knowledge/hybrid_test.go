package knowledge

import (
	"math"
	"testing"
)

// hybridIndex has three chunks on three axes: "parcel" words on x, "refund" words on y,
// the opening hours on z, so similarities are exact.
func hybridIndex() *Index {
	ix := NewIndex()
	ix.Add("kb", []Chunk{
		{ID: "ship", Text: "Standard delivery takes three days; the parcel is tracked.", Vector: []float32{1, 0, 0}},
		{ID: "refund", Text: "Refunds go back to your card within five days.", Vector: []float32{0, 2, 0}},
		{ID: "hours", Text: "Open Monday to Friday.", Vector: []float32{0, 0, 1}},
	})
	return ix
}

func TestHybridEvidenceAndScores(t *testing.T) {
	ix := hybridIndex()
	// "money returned" shares no word with the refund chunk but points its way.
	hits := ix.SearchHybrid("money returned please", []float32{0, 1, 0}, 3, 0, DefaultFusion)
	if len(hits) == 0 || hits[0].ChunkID != "refund" || hits[0].Evidence != EvidenceVector {
		t.Fatalf("hits %+v, want refund first, found by its vector", hits)
	}
	if want := DefaultFusion.VectorWeight; math.Abs(hits[0].Score-want) > 1e-6 {
		t.Errorf("score %v, want the vector share %v for a cosine of 1 and no lexical score", hits[0].Score, want)
	}
	hits = ix.SearchHybrid("refunds to my card", []float32{0, 1, 0}, 3, 0, DefaultFusion)
	if hits[0].ChunkID != "refund" || hits[0].Evidence != EvidenceBoth {
		t.Errorf("hits %+v, want refund first with both", hits)
	}
	hits = ix.SearchHybrid("tracked parcel", []float32{0, 0, 1}, 3, 0, DefaultFusion)
	for _, h := range hits {
		if h.ChunkID == "ship" && h.Evidence != EvidenceBoth && h.Evidence != EvidenceLexical {
			t.Errorf("ship found by %s", h.Evidence)
		}
		if h.Score < 0 || h.Score > 1 {
			t.Errorf("score %v outside [0, 1]", h.Score)
		}
	}
	// The threshold applies to the fused score.
	for _, h := range ix.SearchHybrid("refunds to my card", []float32{0, 1, 0}, 3, 0.6, DefaultFusion) {
		if h.Score < 0.6 {
			t.Errorf("%s scored %.2f under the threshold", h.ChunkID, h.Score)
		}
	}
	// A query vector of another dimension counts for nothing: lexical evidence only.
	for _, h := range ix.SearchHybrid("parcel", []float32{1, 2}, 3, 0, DefaultFusion) {
		if h.Evidence != EvidenceLexical {
			t.Errorf("evidence %s with a vector of the wrong dimension", h.Evidence)
		}
	}
}

func TestRRFScaledToOne(t *testing.T) {
	ix := hybridIndex()
	hits := ix.SearchHybrid("refunds card", []float32{0, 1, 0}, 1, 0, Fusion{Method: FuseRRF, VectorWeight: 0.5, RRFK: 60})
	if len(hits) != 1 || hits[0].ChunkID != "refund" || math.Abs(hits[0].Score-1) > 1e-9 {
		t.Errorf("first in both rankings: %+v, want score 1", hits)
	}
	if got := rrf(0, 1, 0.5, 60); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("first in the vector ranking only: %v, want 0.5", got)
	}
}
