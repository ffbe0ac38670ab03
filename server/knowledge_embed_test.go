package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/knowledge"
)

// conceptEmbedder is a fake OpenAI-compatible endpoint on loopback: texts about dogs point
// one way, everything else the other, so a semantic match with no shared word is visible.
func conceptEmbedder(t *testing.T, inputs *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "fake-embed" {
			http.Error(w, "bad request", 400)
			return
		}
		inputs.Add(int64(len(req.Input)))
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Data []item `json:"data"`
		}{}
		for i, s := range req.Input {
			v := []float32{0, 1}
			if l := strings.ToLower(s); strings.Contains(l, "dog") || strings.Contains(l, "canine") {
				v = []float32{1, 0}
			}
			out.Data = append(out.Data, item{Index: i, Embedding: v})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestKnowledgeQueryWithEmbeddings(t *testing.T) {
	var inputs atomic.Int64
	emb := conceptEmbedder(t, &inputs)
	embedder := knowledge.NewOpenAIEmbedder(knowledge.OpenAIEmbedderConfig{BaseURL: emb.URL + "/v1", Model: "fake-embed"})
	e := newKBEnv(t, kbEnvOptions{bolt: bolt.Options{Knowledge: bolt.KnowledgeOptions{Embedder: embedder, EmbeddingModel: "fake-embed"}}, fetcher: true})
	created := e.createKB(e.Owner.Token, map[string]any{"name": "Pets", "texts": []map[string]any{
		{"content": "Canine companions are welcome in the garden."},
		{"content": "The shop opens at nine."},
	}})
	id := created["id"].(string)
	if st := path(created, "embeddings.status"); st != "embedding" && st != "ready" {
		t.Errorf("a new knowledge base's embeddings status %v", st)
	}
	// The operator's provider embeds the two chunks in the background, as a job.
	waitFor(t, 30*time.Second, "the embeddings to be ready", func() bool {
		r := e.do("GET", "/api/v1/knowledge-bases/"+id, e.Owner.Token, nil)
		return path(r.JSON(), "data.embeddings.status") == "ready"
	})
	if n := inputs.Load(); n != 2 {
		t.Fatalf("%d chunks embedded, want 2", n)
	}
	r := e.do("POST", "/api/v1/knowledge-bases/"+id+"/query", e.Owner.Token, map[string]any{"query": "are dogs allowed"})
	expect(t, r, 200)
	if inputs.Load() != 3 {
		t.Errorf("the query was not embedded once")
	}
	if len(r.List()) != 1 || !strings.Contains(path(r.JSON(), "data.0.text").(string), "Canine") {
		t.Fatalf("a semantic match without shared words was not found: %s", r.Body)
	}
	if s := path(r.JSON(), "data.0.score").(float64); s <= 0 || s > 1 {
		t.Errorf("score %v", s)
	}
	if ev := path(r.JSON(), "data.0.evidence"); ev != "vector" {
		t.Errorf("a chunk found only by its embedding has evidence %v, want vector", ev)
	}
	r = e.do("POST", "/api/v1/knowledge-bases/"+id+"/query", e.Owner.Token, map[string]any{"query": "is the canine garden open"})
	expect(t, r, 200)
	if ev := path(r.JSON(), "data.0.evidence"); ev != "both" {
		t.Errorf("a chunk sharing words and meaning has evidence %v, want both: %s", ev, r.Body)
	}
	r = e.do("POST", "/api/v1/knowledge-bases/"+id+"/query", e.Owner.Token, map[string]any{"query": "when does the shop open", "chunks_to_retrieve": 1})
	expect(t, r, 200)
	if ev := path(r.JSON(), "data.0.evidence"); ev != "both" && ev != "lexical" {
		t.Errorf("evidence %v for a lexical match", ev)
	}

	// Without embeddings the same query shares no word with the text and finds nothing.
	plain := newEnv(t)
	id = plain.createKB(plain.Owner.Token, map[string]any{"name": "Pets", "texts": []map[string]any{{"content": "Canine companions are welcome in the garden."}}})["id"].(string)
	r = plain.do("POST", "/api/v1/knowledge-bases/"+id+"/query", plain.Owner.Token, map[string]any{"query": "are dogs allowed"})
	if len(r.List()) != 0 {
		t.Errorf("lexical search matched without a shared word: %s", r.Body)
	}
	r = plain.do("POST", "/api/v1/knowledge-bases/"+id+"/query", plain.Owner.Token, map[string]any{"query": "canine companions"})
	if ev := path(r.JSON(), "data.0.evidence"); ev != "lexical" {
		t.Errorf("without embeddings evidence is %v, want lexical: %s", ev, r.Body)
	}
}
