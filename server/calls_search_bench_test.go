package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
)

// seededServer serves the directory SEARCH_BENCH_DATA names, one made by
// `go run ./bench -mode seed`, and returns its URL and the seeded API token.
func seededServer(b *testing.B) (string, string) {
	dir := os.Getenv("SEARCH_BENCH_DATA")
	if dir == "" {
		b.Skip("set SEARCH_BENCH_DATA to a directory seeded by go run ./bench -mode seed")
	}
	db, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	// The seeder's account (bench/seed.go): a directory whose seeding was stopped early
	// has no state file yet, so sign in rather than read its token.
	var st struct{ Email, Password string }
	st.Email, st.Password = "bench@voiceapi.local", "bench-password-1"
	if raw, err := os.ReadFile(filepath.Join(dir, "bench-state.json")); err == nil {
		if err := json.Unmarshal(raw, &st); err != nil {
			b.Fatal(err)
		}
	}
	_, token, err := cli.NewServices(db).Auth.Login(context.Background(), st.Email, st.Password, nil)
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(cli.NewServer(db, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))).Handler())
	b.Cleanup(hs.Close)
	return hs.URL, token
}

func get(b *testing.B, u, token string) *http.Response {
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	if res.StatusCode != 200 {
		body, _ := io.ReadAll(res.Body)
		b.Fatalf("%s: %d %s", u, res.StatusCode, body)
	}
	return res
}

// BenchmarkCallSearchSeeded measures a page of 20 search hits over a seeded directory,
// reporting the p50 and p99 latency of the requests (HTTP included).
func BenchmarkCallSearchSeeded(b *testing.B) {
	base, token := seededServer(b)
	for _, q := range []struct{ name, q, sort string }{
		{"one_word", "cancel", "created_at"},
		{"three_words", "cancel my subscription", "created_at"},
		{"one_word_relevance", "cancel", "relevance"},
		{"three_words_relevance", "cancel my subscription", "relevance"},
	} {
		b.Run(q.name, func(b *testing.B) {
			u := base + "/api/v1/calls?" + url.Values{"q": {q.q}, "sort": {q.sort}, "per_page": {"20"}}.Encode()
			var took []time.Duration
			hits := 0
			for b.Loop() {
				start := time.Now()
				res := get(b, u, token)
				var body struct{ Data []json.RawMessage }
				if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
					b.Fatal(err)
				}
				res.Body.Close()
				took = append(took, time.Since(start))
				hits = len(body.Data)
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(hits), "hits")
		})
	}
}

// BenchmarkCallExportSeeded streams exports of the seeded directory to a reader that
// discards them, sampling the heap every 50 ms: the peak heap of an export of 10,000
// calls and of every call should be alike.
func BenchmarkCallExportSeeded(b *testing.B) {
	base, token := seededServer(b)
	for _, tc := range []struct{ name, query string }{
		{"ndjson_10000", "format=ndjson&limit=10000"},
		{"ndjson_all", "format=ndjson"},
		{"csv_all", "format=csv"},
		{"csv_q_all", "format=csv&q=cancel"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			runtime.GC()
			var base0 runtime.MemStats
			runtime.ReadMemStats(&base0)
			var peak atomic.Uint64
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				var m runtime.MemStats
				for {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
					runtime.ReadMemStats(&m)
					if m.HeapInuse > peak.Load() {
						peak.Store(m.HeapInuse)
					}
				}
			}()
			var n int64
			var rows string
			for b.Loop() {
				res := get(b, base+"/api/v1/calls/export?"+tc.query, token)
				c, err := io.Copy(io.Discard, res.Body)
				if err != nil {
					b.Fatal(err)
				}
				res.Body.Close()
				n, rows = c, res.Trailer.Get("Export-Count")
			}
			close(stop)
			<-done
			b.ReportMetric(float64(n)/(1<<20), "MB-streamed")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-inuse-MB")
			b.ReportMetric(float64(base0.HeapInuse)/(1<<20), "heap-before-MB")
			b.Logf("%s: %s calls, %d bytes", tc.name, rows, n)
		})
	}
}
