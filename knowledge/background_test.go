package knowledge

import (
	"bytes"
	"compress/gzip"
	"math"
	"testing"
)

// The embedded table is the one genbackground writes from GloVe's first 100,000 words:
// about 70,000 English stems, frequent words more probable than rare ones, no stop words.
func TestEmbeddedBackground(t *testing.T) {
	bg := loadBackground()
	if n := len(bg); n < 60_000 || n > 80_000 {
		t.Errorf("the table has %d stems, want about 70,000 (GloVe's first 100,000 words, stemmed)", n)
	}
	if len(englishBackground) > 1<<20 {
		t.Errorf("the embedded table is %d bytes, over 1 MB", len(englishBackground))
	}
	for _, w := range []string{"the", "1990"} { // no other word stems to these
		if _, ok := bg[w]; ok {
			t.Errorf("%q is in the table; stop words and words with digits are not", w)
		}
	}
	order := []string{"way", "project", "channel", "mascot", "gopher"} // GloVe ranks 171, 675, 4274 (channels), 12400, 43963
	for i := 1; i < len(order); i++ {
		a, b := stem(english_, order[i-1]), stem(english_, order[i])
		if bg[a] <= bg[b] || bg[b] <= 0 {
			t.Errorf("p(%s) = %g, p(%s) = %g: want the more frequent word more probable, both known", a, bg[a], b, bg[b])
		}
	}
	if _, ok := bg["goroutin"]; ok {
		t.Error(`"goroutine" is not among GloVe's words; the table should not know it`)
	}
}

func TestWriteBackground(t *testing.T) {
	words := []string{"the", "uses", "used", "x", "Go", "go-to", "café", "gopher", "use", "42"}
	var buf bytes.Buffer
	if err := WriteBackground(&buf, words); err != nil {
		t.Fatal(err)
	}
	bg, err := readBackground(&buf)
	if err != nil {
		t.Fatal(err)
	}
	h := harmonic(len(words))
	want := map[string]float64{
		"use":    (1.0/2 + 1.0/3 + 1.0/9) / h, // "uses", "used" and "use" are one stem
		"gopher": 1.0 / 8 / h,
	}
	if len(bg) != len(want) {
		t.Errorf("table %v, want only %v: stop words, one-letter words, capitals, hyphens, accents and digits are left out", bg, want)
	}
	for s, p := range want {
		if got := bg[s]; math.Abs(got-p)/p > 0.035 {
			t.Errorf("p(%s) = %g, want %g within the table's 3%% resolution", s, got, p)
		}
	}
}

func TestReadBackgroundRefusesDamage(t *testing.T) {
	for name, data := range map[string][]byte{
		"not gzip":     []byte("words 10\n1 use\n"),
		"empty":        gzipped(t, ""),
		"no header":    gzipped(t, "1 use\n"),
		"bad class":    gzipped(t, "words 10\nx use\n"),
		"zero words":   gzipped(t, "words 0\n"),
		"header alone": nil,
	} {
		if name == "header alone" {
			if bg, err := readBackground(bytes.NewReader(gzipped(t, "words 10\n"))); err != nil || len(bg) != 0 {
				t.Errorf("%s: %v, %v; want an empty table", name, bg, err)
			}
			continue
		}
		if _, err := readBackground(bytes.NewReader(data)); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// termIDF smooths an English word's document frequency towards general English, a lot in
// a small base and hardly at all in a large one, and leaves other languages and words the
// background does not know as BM25 has them.
func TestTermIDF(t *testing.T) {
	bm25 := func(n float64, df int) float64 { return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5)) }
	tests := []struct {
		name     string
		term     string
		n        float64
		df       int
		lang     language
		min, max float64 // the smoothed idf over BM25's
	}{
		{"common English word in one chunk of 20", "way", 20, 1, english_, 0, 0.75},
		{"rare English word in one chunk of 20", "gopher", 20, 1, english_, 1, 1.5},
		{"common English word in 1,000 chunks of 100,000", "way", 100_000, 1_000, english_, 0.95, 1},
		{"word the background lacks", "goroutin", 20, 1, english_, 1, 1},
		{"Spanish question", "way", 20, 1, spanish_, 1, 1},
		{"French question", "project", 20, 1, french_, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, base := termIDF(tt.term, tt.n, tt.df, tt.lang), bm25(tt.n, tt.df)
			if r := got / base; r < tt.min-1e-9 || r > tt.max+1e-9 {
				t.Errorf("idf %.3f, BM25's %.3f: ratio %.3f, want %.2f to %.2f", got, base, r, tt.min, tt.max)
			}
		})
	}
}

// In a small base where each word is in one chunk of the same length, the chunk with the
// word that is rare in English ranks first: without the background the two would tie,
// and the tie goes to the other chunk's ID.
func TestBackgroundRanksTheRarerWord(t *testing.T) {
	ix := NewIndex()
	ix.Add("s", []Chunk{
		{ID: "a", Text: "There is one way to stop it."},
		{ID: "b", Text: "The gopher is our mascot friend."},
		{ID: "c", Text: "Packages are compiled separately."},
		{ID: "d", Text: "Modules record dependency versions."},
	})
	hits := ix.Search("the way of the gopher", 2, 0)
	if len(hits) != 2 || hits[0].ChunkID != "b" {
		t.Fatalf("hits %+v, want the gopher's chunk first", hits)
	}
	if hits[0].Score <= hits[1].Score {
		t.Errorf("scores %.3f and %.3f: want the rarer word's chunk strictly ahead", hits[0].Score, hits[1].Score)
	}
}
