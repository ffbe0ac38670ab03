package server

// The url fetcher: url sources are stored pending and fetched here, in the background,
// through the SSRF guard (conventions §14). Pending sources live in the database, so the
// fetcher needs no queue of its own: it scans for them when it starts (a restart resumes
// them), when a url is added or refetched, and once a minute.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/netguard"
)

// Defaults of the url fetcher's Config fields.
const (
	DefaultURLFetchTimeout  = 30 * time.Second
	DefaultURLFetchMaxBytes = 10 << 20
	urlFetchParallel        = 4
	urlFetchPoll            = time.Minute
)

// urlFetcher fetches pending url sources.
type urlFetcher struct {
	svc      data.KnowledgeBaseService
	client   *http.Client
	maxBytes int64
	log      *slog.Logger
	wakeC    chan struct{}

	mu      sync.Mutex
	running bool
}

func newURLFetcher(svc data.KnowledgeBaseService, cfg Config, log *slog.Logger) *urlFetcher {
	timeout := cfg.URLFetchTimeout
	if timeout <= 0 {
		timeout = DefaultURLFetchTimeout
	}
	maxBytes := cfg.URLFetchMaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultURLFetchMaxBytes
	}
	return &urlFetcher{
		svc:      svc,
		client:   netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateURLs, Timeout: timeout, MaxRedirects: netguard.DefaultMaxRedirects}),
		maxBytes: maxBytes,
		log:      log,
		wakeC:    make(chan struct{}, 1),
	}
}

// wake asks for a scan soon; it never blocks, and wakes while a scan runs fold into one.
func (f *urlFetcher) wake() {
	select {
	case f.wakeC <- struct{}{}:
	default:
	}
}

// StartKnowledgeFetcher runs the url fetcher until ctx is done or stop is called; stop
// waits for it to finish, so call it before closing the database. A fetch cut short by
// stop leaves its source pending for the next start.
func (s *Server) StartKnowledgeFetcher(ctx context.Context) (stop func()) {
	f := s.kbFetcher
	if f == nil || f.svc == nil {
		return func() {}
	}
	f.mu.Lock()
	if f.running {
		f.mu.Unlock()
		panic("server: the knowledge fetcher is already running")
	}
	f.running = true
	f.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.run(ctx)
	}()
	return func() {
		cancel()
		<-done
		f.mu.Lock()
		f.running = false
		f.mu.Unlock()
	}
}

func (f *urlFetcher) run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		jobs, err := f.svc.PendingURLs(ctx)
		if err != nil && ctx.Err() == nil {
			f.log.Error("listing pending url sources", "error", err)
		}
		sem := make(chan struct{}, urlFetchParallel)
		var wg sync.WaitGroup
		for _, job := range jobs {
			if ctx.Err() != nil {
				break
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				f.fetchOne(ctx, job)
			}()
		}
		wg.Wait()
		timer.Reset(urlFetchPoll)
		select {
		case <-ctx.Done():
			return
		case <-f.wakeC:
		case <-timer.C:
		}
	}
}

// fetchOne fetches a url and hands the result to storage, which extracts and indexes it or
// marks the source failed with the reason.
func (f *urlFetcher) fetchOne(ctx context.Context, job data.URLFetch) {
	got := f.fetch(ctx, job.URL)
	if ctx.Err() != nil {
		return // shutting down: the source stays pending and resumes on the next start
	}
	if err := f.svc.CompleteURL(ctx, job, got); err != nil && ctx.Err() == nil {
		f.log.Error("storing a fetched url source", "source_id", job.SourceID, "error", err)
	}
}

func (f *urlFetcher) fetch(ctx context.Context, rawURL string) data.FetchedURL {
	if err := netguard.CheckURL(rawURL); err != nil {
		return data.FetchedURL{Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return data.FetchedURL{Err: err}
	}
	req.Header.Set("User-Agent", "voiceapi-knowledge-fetcher/1")
	req.Header.Set("Accept", "text/html, text/plain, text/markdown, application/pdf, application/json;q=0.9, */*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		// The *url.Error repeats the URL the record already shows; keep its cause, which
		// names the refused address when the guard stopped it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return data.FetchedURL{Err: fmt.Errorf("fetching the url failed: %w", err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return data.FetchedURL{Err: fmt.Errorf("the server answered %s", resp.Status)}
	}
	body, err := netguard.ReadLimited(resp.Body, f.maxBytes)
	if err != nil {
		return data.FetchedURL{Err: fmt.Errorf("reading the response failed: %w", err)}
	}
	return data.FetchedURL{Body: body, ContentType: resp.Header.Get("Content-Type")}
}
