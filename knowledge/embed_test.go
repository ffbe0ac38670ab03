package knowledge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeVector maps a text to a 3-d vector by topic, so tests can predict similarities.
func fakeVector(text string) []float32 {
	t := strings.ToLower(text)
	switch {
	case strings.Contains(t, "parcel") || strings.Contains(t, "deliver"):
		return []float32{1, 0.1, 0}
	case strings.Contains(t, "money") || strings.Contains(t, "refund"):
		return []float32{0, 1, 0.1}
	}
	return []float32{0, 0, 1}
}

func fakeEmbeddingServer(t *testing.T, calls *int) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*calls++
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			http.Error(w, "wrong route", 404)
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, `{"error":"bad key"}`, 401)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "embed-small" {
			http.Error(w, "bad request", 400)
			return
		}
		// Answer in reverse order: the client must place vectors by index.
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, item{Index: i, Embedding: fakeVector(req.Input[i])})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data, "model": req.Model})
	}))
}

func TestOpenAIEmbedder(t *testing.T) {
	calls := 0
	srv := fakeEmbeddingServer(t, &calls)
	defer srv.Close()
	e := NewOpenAIEmbedder(OpenAIEmbedderConfig{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Model: "embed-small", BatchSize: 2})
	texts := []string{"where is my parcel", "I want my money back", "opening hours"}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("%d requests for 3 texts in batches of 2", calls)
	}
	for i, v := range vecs {
		if fmt.Sprint(v) != fmt.Sprint(fakeVector(texts[i])) {
			t.Errorf("vector %d = %v, want %v", i, v, fakeVector(texts[i]))
		}
	}
	bad := NewOpenAIEmbedder(OpenAIEmbedderConfig{BaseURL: srv.URL + "/v1", APIKey: "wrong", Model: "embed-small"})
	if _, err := bad.Embed(context.Background(), texts); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("bad key: %v", err)
	}
}

func TestOpenAIEmbedderRejectsBadResponses(t *testing.T) {
	for name, body := range map[string]string{
		"too few vectors":  `{"data":[{"index":0,"embedding":[1,2]}]}`,
		"repeated index":   `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`,
		"mixed dimensions": `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`,
		"not json":         `<html>`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
		_, err := NewOpenAIEmbedder(OpenAIEmbedderConfig{BaseURL: srv.URL}).Embed(context.Background(), []string{"a", "b"})
		srv.Close()
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestOpenAIEmbedderTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	_, err := NewOpenAIEmbedder(OpenAIEmbedderConfig{BaseURL: srv.URL, Timeout: 100 * time.Millisecond}).Embed(context.Background(), []string{"a"})
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
}

func TestSearchHybrid(t *testing.T) {
	calls := 0
	srv := fakeEmbeddingServer(t, &calls)
	defer srv.Close()
	e := NewOpenAIEmbedder(OpenAIEmbedderConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "embed-small"})
	chunks := []Chunk{
		{ID: "ship", Text: "Standard delivery takes three days; the parcel is tracked."},
		{ID: "refund", Text: "Refunds go back to your card within five days."},
		{ID: "hours", Text: "Open Monday to Friday."},
	}
	var texts []string
	for _, c := range chunks {
		texts = append(texts, c.Text)
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range chunks {
		chunks[i].Vector = vecs[i]
	}
	ix := NewIndex()
	ix.Add("kb", chunks)

	// "money returned" shares no word with the refund chunk: lexical search misses it, the
	// semantic part of the hybrid score finds it.
	q := "Can I have my money returned?"
	if hits := ix.Search(q, 3, 0.3); len(hits) != 0 {
		t.Fatalf("lexical search found %+v", hits)
	}
	qv, _ := e.Embed(context.Background(), []string{q})
	hits := ix.SearchHybrid(q, qv[0], 3, 0.3, Fusion{Method: FuseLinear, VectorWeight: 0.5})
	if len(hits) != 1 || hits[0].ChunkID != "refund" || hits[0].Score < 0.3 || hits[0].Score > 1 {
		t.Fatalf("hybrid hits %+v, want only refund", hits)
	}
	// Weight 0 is lexical search; a query vector of another dimension counts for nothing.
	lex := ix.Search("parcel delivery", 3, 0)
	hyb := ix.SearchHybrid("parcel delivery", []float32{1, 2}, 3, 0, Fusion{Method: FuseLinear, VectorWeight: 0})
	if fmt.Sprint(lex) != fmt.Sprint(hyb) {
		t.Errorf("weight 0: %+v vs lexical %+v", hyb, lex)
	}
}

// TestOpenAIEmbedderErrorHidesTheKey: a provider's refusal is kept as the knowledge base's
// last failure, which every reader of the base sees; a provider (or a gateway in front of
// it) that quotes the key or the Authorization header back must not show it there.
func TestOpenAIEmbedderErrorHidesTheKey(t *testing.T) {
	const key = "sk-embed-SECRET-0123456789abcdef"
	for name, echo := range map[string]func(r *http.Request) string{
		"header":    func(r *http.Request) string { return `{"error":"bad token: ` + r.Header.Get("Authorization") + `"}` },
		"key alone": func(*http.Request) string { return "Incorrect API key provided: " + key + "." },
		"masked":    func(*http.Request) string { return "Incorrect API key provided: sk-e*****************cdef" },
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, echo(r))
		}))
		_, err := NewOpenAIEmbedder(OpenAIEmbedderConfig{BaseURL: srv.URL, APIKey: key}).Embed(context.Background(), []string{"a"})
		srv.Close()
		if err == nil {
			t.Fatalf("%s: a 401 was accepted", name)
		}
		if msg := err.Error(); strings.Contains(msg, "SECRET") || strings.Contains(msg, "cdef") || !strings.Contains(msg, "401") {
			t.Errorf("%s: the error shows the key, or not the status: %s", name, msg)
		}
	}
}
