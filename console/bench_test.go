package console_test

import (
	"fmt"
	"io"
	"net/http"
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
	for _, path := range []string{"/agents", m[1]} {
		b.Run(map[bool]string{true: "first", false: "second"}[path == "/agents"], func(b *testing.B) {
			req, _ := http.NewRequest("GET", e.URL+path, nil)
			req.Header.Set("Accept-Encoding", "gzip")
			for _, c := range s.Cookies {
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
		})
	}
}
