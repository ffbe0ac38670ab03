package server

// The url fetcher itself lives in knowledge/ (knowledge.Fetcher); the server builds it
// with the SSRF-guarded client its configuration allows and hands it to the knowledge
// base service, whose fetch jobs (knowledge_base.fetch_url, service/knowledge_urls.go)
// use it when the job runner runs them.

import (
	"time"

	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/netguard"
)

// Defaults of the url fetcher's Config fields.
const (
	DefaultURLFetchTimeout  = 30 * time.Second
	DefaultURLFetchMaxBytes = knowledge.DefaultFetchMaxBytes
)

// useURLFetcher gives the knowledge base service the fetcher cfg describes.
func (s *Server) useURLFetcher() {
	if s.svc.KnowledgeBases == nil {
		return
	}
	timeout := s.cfg.URLFetchTimeout
	if timeout <= 0 {
		timeout = DefaultURLFetchTimeout
	}
	s.svc.KnowledgeBases.UseURLFetcher(knowledge.NewFetcher(knowledge.FetcherOptions{
		Client: netguard.NewClient(netguard.Options{AllowPrivate: s.cfg.AllowPrivateURLs, AllowURLPrefixes: s.cfg.AllowURLPrefixes,
			Timeout: timeout, MaxRedirects: netguard.DefaultMaxRedirects}),
		CheckURL: netguard.CheckURL,
		MaxBytes: s.cfg.URLFetchMaxBytes,
	}))
}
