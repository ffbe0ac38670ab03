package knowledge

import "testing"

// TestWhenQuestionFavoursDatedChunk: of two chunks with the question's words, the one
// naming a version and a date answers "when"; without the evidence the chunk richer in
// the question's words comes first. Any other question keeps that order.
func TestWhenQuestionFavoursDatedChunk(t *testing.T) {
	ix := NewIndex()
	ix.Add("guide", []Chunk{
		{ID: "about", Text: "Generic types: a generic type takes type parameters, and generic types let one function work on values of many types."},
		{ID: "history", Text: "Generic types came with version 1.18 of the language, released in March 2022."},
		{ID: "other", Text: "The standard library covers files, networking and text."},
	})
	for _, c := range []struct {
		query, first string
	}{
		{"When did the language get generic types?", "history"},
		{"¿Cuándo llegaron los generic types?", "history"},
		{"What are generic types?", "about"},
	} {
		hits := ix.Search(c.query, 3, 0)
		if len(hits) < 2 || hits[0].ChunkID != c.first {
			t.Errorf("%q: first hit %v, want %s", c.query, hits, c.first)
		}
		for _, h := range hits {
			if h.Score < 0 || h.Score > 1 {
				t.Errorf("%q: %s scored %v, outside [0, 1]", c.query, h.ChunkID, h.Score)
			}
		}
	}
}

func TestAsksWhenAndIsDated(t *testing.T) {
	for q, want := range map[string]bool{
		"When did Go get generic types?":    true,
		"  when is the office open?":        true,
		"In what year was it released?":     true,
		"Since when did they support it?":   true,
		"Why did Go get generic types?":     false,
		"Whenever I log in, it fails":       false,
		"¿Cuándo vence mi clave?":           true,
		"cuándo vence mi clave":             true,
		"WHEN DID IT SHIP?":                 true,
		"¿CUÁNDO vence mi clave?":           true,
		"How did you know when it changed?": false,
	} {
		if got := asksWhen(q); got != want {
			t.Errorf("asksWhen(%q) = %v, want %v", q, got, want)
		}
	}
	for text, want := range map[string]bool{
		"It was founded in 1799.":         false,
		"It was founded in 1800.":         true,
		"Supported until 2099.":           true,
		"Planned for 2100.":               false,
		"Added in Go 1.18.":               true,
		"Fixed in v2.0.1":                 true,
		"Fixed in v2, not in v3.":         false,
		"see file_2024 and 12024":         false,
		"DECEMBER":                        true,
		"Released in March":               true,
		"You may change it at any time.":  false,
		"Call 555 0100 to reach us":       false,
		"Ask for a refund within 30 days": false,
	} {
		if got := isDated(text); got != want {
			t.Errorf("isDated(%q) = %v, want %v", text, got, want)
		}
	}
}

// BenchmarkIsDated measures the check each chunk gets when it is indexed, over the
// synthetic chunks of build10k.
func BenchmarkIsDated(b *testing.B) {
	texts := syntheticCorpus(b, 1000)
	b.ResetTimer()
	for i := range b.N {
		isDated(texts[i%len(texts)])
	}
}
