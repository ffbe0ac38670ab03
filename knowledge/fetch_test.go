package knowledge

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

func TestFetcherFetchesEveryPendingURLWithItsOutcome(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<p>Hello</p>"))
		case "/big":
			w.Write([]byte(strings.Repeat("x", 101)))
		case "/exact":
			w.Write([]byte(strings.Repeat("x", 100)))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := NewFetcher(FetcherOptions{Client: srv.Client(), MaxBytes: 100,
		CheckURL: func(u string) error {
			if strings.HasSuffix(u, "/refused") {
				return errors.New("the URL is refused")
			}
			return nil
		}})
	got := map[string]data.FetchedURL{}
	for _, p := range []string{"page", "big", "exact", "missing", "refused"} {
		got[p] = f.Fetch(context.Background(), srv.URL+"/"+p)
	}
	if g := got["page"]; g.Err != nil || string(g.Body) != "<p>Hello</p>" || g.ContentType != "text/html" {
		t.Errorf("page: %+v", g)
	}
	if g := got["exact"]; g.Err != nil || len(g.Body) != 100 {
		t.Errorf("a body of exactly MaxBytes: %d bytes, %v; want it whole", len(g.Body), g.Err)
	}
	if g := got["big"]; g.Err == nil || !strings.Contains(g.Err.Error(), "too large") {
		t.Errorf("a body past MaxBytes: %v, want too large", g.Err)
	}
	if g := got["missing"]; g.Err == nil || !strings.Contains(g.Err.Error(), "404") {
		t.Errorf("a 404: %v, want the status", g.Err)
	}
	if g := got["refused"]; g.Err == nil || g.Err.Error() != "the URL is refused" {
		t.Errorf("a refused url: %v, want CheckURL's error", g.Err)
	}
}

// TestFetcherStopsWithItsContext: a fetch whose ctx ends (the job's lease lost, the
// server stopping) returns at once with ctx's error.
func TestFetcherStopsWithItsContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := NewFetcher(FetcherOptions{Client: srv.Client()}).Fetch(ctx, srv.URL+"/slow")
	if !errors.Is(got.Err, context.Canceled) {
		t.Errorf("a fetch with an ended ctx: %v, want context.Canceled", got.Err)
	}
}
