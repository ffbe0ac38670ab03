package knowledge

// The url fetcher: url sources are stored pending, with a durable job
// (knowledge_base.fetch_url, service/knowledge_urls.go) that the server's job runner
// claims; its handler fetches the url here, through the caller's SSRF-guarded client
// (conventions §14), and hands the result back to be extracted and indexed.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/voiceapi/voiceapi/data"
)

// DefaultFetchMaxBytes is FetcherOptions.MaxBytes when 0.
const DefaultFetchMaxBytes = 10 << 20

// FetcherOptions configure a Fetcher. Client is required.
type FetcherOptions struct {
	// Client sends the requests: the SSRF-guarded outbound client, with its timeout.
	Client *http.Client
	// CheckURL refuses a url before any request (the outbound URL check); nil checks
	// nothing more than the client does.
	CheckURL func(string) error
	// MaxBytes bounds a response body; DefaultFetchMaxBytes when 0.
	MaxBytes int64
}

// Fetcher fetches url sources: data.URLFetcher.
type Fetcher struct {
	opts FetcherOptions
}

var _ data.URLFetcher = (*Fetcher)(nil)

// NewFetcher returns a fetcher.
func NewFetcher(opts FetcherOptions) *Fetcher {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultFetchMaxBytes
	}
	return &Fetcher{opts: opts}
}

// Fetch implements data.URLFetcher: the body and Content-Type of a 2xx answer of at most
// MaxBytes, or why there is none (the source's error; for a fetch cut short by ctx, an
// Err wrapping ctx's error).
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) data.FetchedURL {
	return f.fetch(ctx, rawURL)
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
