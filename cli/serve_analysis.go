package cli

import (
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/netguard"
	"github.com/voiceapi/voiceapi/service"
)

// AnalysisOptions are post-call analysis's model clients: each agent version's provider
// through the SSRF guard (a base_url or an endpoint is a URL the server calls, like a
// webhook's), which --allow-private-urls lifts as it does for webhooks and fetches.
func AnalysisOptions(allowPrivate bool) service.AnalysisOptions {
	opts := llm.Options{HTTPClient: netguard.NewClient(netguard.Options{AllowPrivate: allowPrivate, Timeout: llm.DefaultTimeout})}
	return service.AnalysisOptions{
		Models: func(cfg data.LLMConfig) (llm.Client, error) { return llm.New(llm.ConfigOf(cfg), opts) },
	}
}
