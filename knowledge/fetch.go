package knowledge

// The url fetcher: url sources are stored pending and fetched here, in the background,
// through the caller's SSRF-guarded client (conventions §14). Pending sources live in the
// database, so the fetcher needs no queue of its own: it scans for them when it starts (a
// restart resumes them), when woken (a url was added or refetched), and once a minute.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// Defaults of FetcherOptions.
const (
	DefaultFetchMaxBytes = 10 << 20
	DefaultFetchParallel = 4
	DefaultFetchPoll     = time.Minute
)

// URLQueue is where the fetcher finds pending url sources and hands back what it got:
// data.KnowledgeBaseService does both.
type URLQueue interface {
	PendingURLs(ctx context.Context) ([]data.URLFetch, error)
	CompleteURL(ctx context.Context, job data.URLFetch, got data.FetchedURL) error
}

// FetcherOptions configure a Fetcher. Client is required.
type FetcherOptions struct {
	// Client sends the requests: the SSRF-guarded outbound client, with its timeout.
	Client *http.Client
	// CheckURL refuses a url before any request (the outbound URL check); nil checks
	// nothing more than the client does.
	CheckURL func(string) error
	// MaxBytes bounds a response body; DefaultFetchMaxBytes when 0.
	MaxBytes int64
	// Parallel is how many fetches run at once; DefaultFetchParallel when 0.
	Parallel int
	// Poll is the time between scans when nothing wakes the fetcher; DefaultFetchPoll
	// when 0.
	Poll time.Duration
	// Logger receives the errors of the background work; slog.Default when nil.
	Logger *slog.Logger
}

// Fetcher fetches pending url sources in the background.
type Fetcher struct {
	queue URLQueue
	opts  FetcherOptions
	wakeC chan struct{}

	mu      sync.Mutex
	running bool
}

// NewFetcher returns a fetcher of queue's pending urls; Start runs it.
func NewFetcher(queue URLQueue, opts FetcherOptions) *Fetcher {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultFetchMaxBytes
	}
	if opts.Parallel <= 0 {
		opts.Parallel = DefaultFetchParallel
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultFetchPoll
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Fetcher{queue: queue, opts: opts, wakeC: make(chan struct{}, 1)}
}

// Wake asks for a scan soon; it never blocks, and wakes while a scan runs fold into one.
func (f *Fetcher) Wake() {
	select {
	case f.wakeC <- struct{}{}:
	default:
	}
}

// Start runs the fetcher until ctx is done or stop is called; stop waits for it to
// finish, so call it before closing the storage. A fetch cut short by stop leaves its
// source pending for the next start. Starting a running fetcher panics.
func (f *Fetcher) Start(ctx context.Context) (stop func()) {
	f.mu.Lock()
	if f.running {
		f.mu.Unlock()
		panic("knowledge: the url fetcher is already running")
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

func (f *Fetcher) run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		jobs, err := f.queue.PendingURLs(ctx)
		if err != nil && ctx.Err() == nil {
			f.opts.Logger.Error("listing pending url sources", "error", err)
		}
		sem := make(chan struct{}, f.opts.Parallel)
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
		timer.Reset(f.opts.Poll)
		select {
		case <-ctx.Done():
			return
		case <-f.wakeC:
		case <-timer.C:
		}
	}
}

// fetchOne fetches a url and hands the result back, to be extracted and indexed or to
// mark the source failed with the reason.
func (f *Fetcher) fetchOne(ctx context.Context, job data.URLFetch) {
	got := f.fetch(ctx, job.URL)
	if ctx.Err() != nil {
		return // shutting down: the source stays pending and resumes on the next start
	}
	if err := f.queue.CompleteURL(ctx, job, got); err != nil && ctx.Err() == nil {
		f.opts.Logger.Error("storing a fetched url source", "source_id", job.SourceID, "error", err)
	}
}

func (f *Fetcher) fetch(ctx context.Context, rawURL string) data.FetchedURL {
	if f.opts.CheckURL != nil {
		if err := f.opts.CheckURL(rawURL); err != nil {
			return data.FetchedURL{Err: err}
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return data.FetchedURL{Err: err}
	}
	req.Header.Set("User-Agent", "voiceapi-knowledge-fetcher/1")
	req.Header.Set("Accept", "text/html, text/plain, text/markdown, application/pdf, application/json;q=0.9, */*;q=0.5")
	resp, err := f.opts.Client.Do(req)
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
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.opts.MaxBytes+1))
	if err == nil && int64(len(body)) > f.opts.MaxBytes {
		err = fmt.Errorf("response too large: more than %d bytes", f.opts.MaxBytes)
	}
	if err != nil {
		return data.FetchedURL{Err: fmt.Errorf("reading the response failed: %w", err)}
	}
	return data.FetchedURL{Body: body, ContentType: resp.Header.Get("Content-Type")}
}
