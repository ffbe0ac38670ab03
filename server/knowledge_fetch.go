package server

// The url fetcher itself lives in knowledge/ (knowledge.Fetcher); the server builds it on
// the knowledge base service with the SSRF-guarded client, wakes it when a request adds
// or refetches urls, and lets the command that serves start it.

import (
	"context"
	"log/slog"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/netguard"
)

// Defaults of the url fetcher's Config fields.
const (
	DefaultURLFetchTimeout  = 30 * time.Second
	DefaultURLFetchMaxBytes = knowledge.DefaultFetchMaxBytes
)

// urlFetcher is the server's url fetcher: nil-safe to wake, absent without a service.
type urlFetcher struct {
	*knowledge.Fetcher
}

func newURLFetcher(svc data.KnowledgeBaseService, cfg Config, log *slog.Logger) *urlFetcher {
	if svc == nil {
		return &urlFetcher{}
	}
	timeout := cfg.URLFetchTimeout
	if timeout <= 0 {
		timeout = DefaultURLFetchTimeout
	}
	return &urlFetcher{knowledge.NewFetcher(svc, knowledge.FetcherOptions{
		Client:   netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateURLs, Timeout: timeout, MaxRedirects: netguard.DefaultMaxRedirects}),
		CheckURL: netguard.CheckURL,
		MaxBytes: cfg.URLFetchMaxBytes,
		Logger:   log,
	})}
}

// wake asks the fetcher for a scan soon.
func (f *urlFetcher) wake() {
	if f != nil && f.Fetcher != nil {
		f.Wake()
	}
}

// StartKnowledgeFetcher runs the url fetcher until ctx is done or stop is called; stop
// waits for it to finish, so call it before closing the database. A fetch cut short by
// stop leaves its source pending for the next start.
func (s *Server) StartKnowledgeFetcher(ctx context.Context) (stop func()) {
	f := s.kbFetcher
	if f == nil || f.Fetcher == nil {
		return func() {}
	}
	return f.Start(ctx)
}
