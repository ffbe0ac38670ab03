package console_test

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

var nextLink = regexp.MustCompile(`href="(/agents\?cursor=[^"]+)"`)

// BenchmarkAgentListPage10k renders the agents page, signed in, over a workspace of
// 10,000 agents: the console asks the API for one page of 20, so the page costs the same
// whatever the total. Each iteration is one whole page: the HTTP request, the in-process
// API call, the template and gzip.
func BenchmarkAgentListPage10k(b *testing.B) {
	e := testenv.Start(b)
	const total, workers = 10_000, 4
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < total; i += workers {
				res := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": fmt.Sprintf("Agent %05d", i)})
				if res.Status != http.StatusCreated {
					errs <- fmt.Errorf("seed agent %d: %d %s", i, res.Status, res.Body)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	s := e.SignIn(e.Owner, "")
	first := e.Do(s.Client, "GET", "/agents", "", nil)
	m := nextLink.FindStringSubmatch(string(first.Body))
	if first.Status != 200 || m == nil {
		b.Fatalf("first page: %d, next link %v", first.Status, m)
	}
	for name, path := range map[string]string{"first": "/agents", "second": html.UnescapeString(m[1])} {
		b.Run(name, func(b *testing.B) { benchPage(b, e.URL+path, s.Cookies) })
	}
}

// BenchmarkCallListPageSeeded renders the calls page, signed in, over a data directory
// seeded by the load harness (`go run ./bench -mode seed -data DIR -calls 1000000`), named
// by CONSOLE_BENCH_DATA; skipped without it. The first page and the one after it.
func BenchmarkCallListPageSeeded(b *testing.B) {
	dir := os.Getenv("CONSOLE_BENCH_DATA")
	if dir == "" {
		b.Skip("set CONSOLE_BENCH_DATA to a directory seeded by go run ./bench -mode seed")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "bench-state.json"))
	if err != nil {
		b.Fatal(err)
	}
	var st struct{ Email, Password string }
	if err := json.Unmarshal(raw, &st); err != nil {
		b.Fatal(err)
	}
	e := testenv.StartIn(b, dir)
	s := e.SignIn(&testenv.User{Email: st.Email, Password: st.Password}, "")
	first := e.Do(s.Client, "GET", "/calls", "", nil)
	m := regexp.MustCompile(`href="(/calls\?cursor=[^"]+)"`).FindStringSubmatch(string(first.Body))
	if first.Status != 200 || m == nil {
		b.Fatalf("first page: %d, next link %v", first.Status, m)
	}
	for name, path := range map[string]string{"first": "/calls", "second": html.UnescapeString(m[1])} {
		b.Run(name, func(b *testing.B) { benchPage(b, e.URL+path, s.Cookies) })
	}
}

// benchPage fetches url with the session's cookies, gzipped, as a browser would.
func benchPage(b *testing.B, url string, cookies []*http.Cookie) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	for _, c := range cookies {
		req.AddCookie(c)
	}
	tr := &http.Transport{DisableCompression: true}
	b.ReportAllocs()
	for b.Loop() {
		res, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
}
