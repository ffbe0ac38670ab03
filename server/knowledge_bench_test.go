package server_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/embedtest"
	"github.com/voiceapi/voiceapi/knowledge"
)

// benchKB fills a knowledge base with n one-chunk texts of 60 words drawn from a
// 5,000-word vocabulary (Zipf-distributed, as words are), through the service for speed
// (a second service on the same database: the server's builds its index on the first
// query, from what is stored).
func benchKB(b *testing.B, e *env, n int) string {
	b.Helper()
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx", i)
	}
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 1, uint64(len(vocab)-1))
	id := e.createKB(e.Owner.Token, map[string]any{"name": "Bench"})["id"].(string)
	ctx := data.WithPrincipal(context.Background(), &data.Principal{UserID: e.Owner.ID, WorkspaceID: e.Owner.WorkspaceID,
		CurrentWorkspaceID: e.Owner.WorkspaceID, Role: data.RoleOwner, Modules: data.Modules})
	kbs := cli.NewServices(e.DB).KnowledgeBases
	for done := 0; done < n; done += 100 {
		var in data.SourcesAdd
		for range 100 {
			words := make([]string, 60)
			for j := range words {
				words[j] = vocab[zipf.Uint64()]
			}
			in.Texts = append(in.Texts, data.TextInput{Content: strings.Join(words, " ")})
		}
		if _, err := kbs.AddSources(ctx, id, in); err != nil {
			b.Fatal(err)
		}
	}
	return id
}

// BenchmarkKnowledgeQueryHybridHTTP is BenchmarkKnowledgeQueryHTTP with every chunk
// embedded (by the job runner, through embedtest's stand-in of /v1/embeddings, at 384 and
// 768 dimensions), so each query is embedded once and ranked by hybrid fusion. The time
// includes the query's round trip to the stand-in, which answers at once: the provider's
// own time would come on top.
func BenchmarkKnowledgeQueryHybridHTTP(b *testing.B) {
	for _, dim := range []int{384, 768} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			stand := embedtest.Start()
			b.Cleanup(stand.Close)
			stand.SetDim(dim)
			embedder := knowledge.NewOpenAIEmbedder(knowledge.OpenAIEmbedderConfig{BaseURL: stand.BaseURL(), Model: "stand-in"})
			e := newKBEnv(b, kbEnvOptions{fetcher: true, bolt: bolt.Options{Knowledge: bolt.KnowledgeOptions{
				MaxSources: 20_000, Embedder: embedder, EmbeddingModel: "stand-in"}}})
			id := benchKB(b, e, 10_000)
			start := time.Now()
			waitFor(b, 5*time.Minute, "10,000 chunks embedded", func() bool {
				r := e.do("GET", "/api/v1/knowledge-bases/"+id, e.Owner.Token, nil)
				return path(r.JSON(), "data.embeddings.status") == "ready"
			})
			b.Logf("10,000 one-chunk sources embedded by the job runner in %s", time.Since(start).Round(time.Millisecond))
			before := stand.Requests()
			r := e.do("POST", "/api/v1/knowledge-bases/"+id+"/query", e.Owner.Token, map[string]any{"query": "w12x w345x", "chunks_to_retrieve": 5})
			if r.Status != 200 || stand.Requests() != before+1 {
				b.Fatalf("the query was not embedded once (%d requests to the stand-in): %d %s", stand.Requests()-before, r.Status, r.Body)
			}
			benchQuery(b, e, id)
		})
	}
}

// BenchmarkKnowledgeQueryHTTP measures POST /api/v1/knowledge-bases/{knowledge_base_id}/query over 10,000
// chunks end to end (HTTP on loopback, auth, JSON), after the index is built.
func BenchmarkKnowledgeQueryHTTP(b *testing.B) {
	e := newKBEnv(b, kbEnvOptions{bolt: bolt.Options{Knowledge: bolt.KnowledgeOptions{MaxSources: 20_000}}})
	id := benchKB(b, e, 10_000)
	benchQuery(b, e, id)
}

// benchQuery times queries of knowledge base id through the API and reports their median
// and 99th percentile.
func benchQuery(b *testing.B, e *env, id string) {
	url := e.URL + "/api/v1/knowledge-bases/" + id + "/query"
	body := []byte(`{"query":"w12x w345x w2100x w7x","chunks_to_retrieve":5}`)
	query := func() {
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.Owner.Token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("query: %v %v", err, resp)
		}
		resp.Body.Close()
	}
	query() // builds the index
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		query()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}

// BenchmarkKnowledgeAddFilesHTTP measures a multipart upload of the three fixture files
// (text, PDF, DOCX) through extraction, chunking, the durable write and the commit.
func BenchmarkKnowledgeAddFilesHTTP(b *testing.B) {
	e := newKBEnv(b, kbEnvOptions{})
	id := e.createKB(e.Owner.Token, map[string]any{"name": "Bench"})["id"].(string)
	var total int64
	parts := []part{}
	for _, name := range []string{"returns.txt", "returns.pdf", "returns.docx"} {
		c := readTestFile(b, name)
		total += int64(len(c))
		parts = append(parts, part{"files", name, c})
	}
	body, ct := multipartBody(b, parts...)
	b.SetBytes(total)
	for b.Loop() {
		r := e.do("POST", "/api/v1/knowledge-bases/"+id+"/sources/add", e.Owner.Token, body, "Content-Type", ct)
		if r.Status != 200 {
			b.Fatalf("status %d: %s", r.Status, r.Body)
		}
		b.StopTimer()
		// Keep the knowledge base under its source limit.
		for _, f := range items(r.Data(), "files") {
			e.do("DELETE", "/api/v1/knowledge-bases/"+id+"/sources/delete/files/"+f["id"].(string), e.Owner.Token, nil)
		}
		b.StartTimer()
	}
}
