package knowledge

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// memQueue holds pending urls and records what the fetcher hands back.
type memQueue struct {
	mu      sync.Mutex
	pending []data.URLFetch
	got     map[string]data.FetchedURL
	done    chan struct{}
	scanned chan struct{} // receives after each scan, when not nil
}

func (q *memQueue) PendingURLs(context.Context) ([]data.URLFetch, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.scanned != nil {
		defer func() { q.scanned <- struct{}{} }()
	}
	return append([]data.URLFetch(nil), q.pending...), nil
}

func (q *memQueue) CompleteURL(_ context.Context, job data.URLFetch, got data.FetchedURL) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, p := range q.pending {
		if p.SourceID == job.SourceID {
			q.pending = append(q.pending[:i], q.pending[i+1:]...)
			break
		}
	}
	q.got[job.SourceID] = got
	if len(q.pending) == 0 {
		close(q.done)
	}
	return nil
}

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
	q := &memQueue{got: map[string]data.FetchedURL{}, done: make(chan struct{})}
	for _, p := range []string{"page", "big", "exact", "missing", "refused"} {
		q.pending = append(q.pending, data.URLFetch{SourceID: p, URL: srv.URL + "/" + p, Attempt: 1})
	}
	f := NewFetcher(q, FetcherOptions{Client: srv.Client(), MaxBytes: 100, Poll: time.Hour,
		CheckURL: func(u string) error {
			if strings.HasSuffix(u, "/refused") {
				return errors.New("the URL is refused")
			}
			return nil
		}})
	stop := f.Start(context.Background())
	select {
	case <-q.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the fetcher did not complete every pending url")
	}
	stop()
	if g := q.got["page"]; g.Err != nil || string(g.Body) != "<p>Hello</p>" || g.ContentType != "text/html" {
		t.Errorf("page: %+v", g)
	}
	if g := q.got["exact"]; g.Err != nil || len(g.Body) != 100 {
		t.Errorf("a body of exactly MaxBytes: %d bytes, %v; want it whole", len(g.Body), g.Err)
	}
	if g := q.got["big"]; g.Err == nil || !strings.Contains(g.Err.Error(), "too large") {
		t.Errorf("a body past MaxBytes: %v, want too large", g.Err)
	}
	if g := q.got["missing"]; g.Err == nil || !strings.Contains(g.Err.Error(), "404") {
		t.Errorf("a 404: %v, want the status", g.Err)
	}
	if g := q.got["refused"]; g.Err == nil || g.Err.Error() != "the URL is refused" {
		t.Errorf("a refused url: %v, want CheckURL's error", g.Err)
	}
}

func TestFetcherWakesAndStops(t *testing.T) {
	q := &memQueue{got: map[string]data.FetchedURL{}, done: make(chan struct{}), scanned: make(chan struct{}, 8)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("text")) }))
	defer srv.Close()
	f := NewFetcher(q, FetcherOptions{Client: srv.Client(), Poll: time.Hour})
	stop := f.Start(context.Background())
	defer stop()
	<-q.scanned // the first scan found nothing; the next waits an hour unless woken
	q.mu.Lock()
	q.pending = append(q.pending, data.URLFetch{SourceID: "late", URL: srv.URL + "/late", Attempt: 1})
	q.mu.Unlock()
	f.Wake()
	select {
	case <-q.done:
	case <-time.After(10 * time.Second):
		t.Fatal("a wake did not start a scan")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("starting a running fetcher did not panic")
			}
		}()
		f.Start(context.Background())
	}()
}
