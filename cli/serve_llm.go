package cli

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/netguard"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// llmFlags are serve's language model settings (conventions §21, docs/configuration.md).
type llmFlags struct {
	// baseURLs are PROVIDER=URL overrides of a provider's API root (gateways, tests).
	baseURLs []string
	// timeout bounds one completion.
	timeout time.Duration
	// maxOpenConversations bounds each workspace's open conversations; 0: no bound.
	maxOpenConversations int
}

func (l *llmFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&l.baseURLs, "llm-base-url", nil, "PROVIDER=URL: send that language model provider's requests to URL instead (a gateway, a test stand-in); repeatable")
	f.DurationVar(&l.timeout, "llm-timeout", llm.DefaultTimeout, "longest a language model may take to answer one request (504 provider_timeout after)")
	f.IntVar(&l.maxOpenConversations, "max-open-conversations", data.DefaultMaxOpenConversations, "conversations a workspace may hold open at once (active, not expired) unless its plan's open_conversations limit says otherwise; a start past it is 409; 0 turns the bound off")
}

// LLMSettings are what conversations need of the operator's configuration.
type LLMSettings struct {
	// BaseURLs replace providers' API roots (--llm-base-url).
	BaseURLs map[string]string
	// Timeout bounds one completion (--llm-timeout); llm.DefaultTimeout when 0.
	Timeout time.Duration
	// MaxOpenConversations bounds each workspace's open conversations
	// (--max-open-conversations); 0: no bound.
	MaxOpenConversations int
	// AllowPrivate lifts the SSRF guard (--allow-private-urls); AllowURLPrefixes lift it
	// for URLs under them (--allow-url-prefix): serve's one netguard.Guard.
	AllowPrivate     bool
	AllowURLPrefixes []string
}

// guard is the SSRF guard of s's clients.
func (s LLMSettings) guard() netguard.Guard {
	return netguard.Guard{AllowPrivate: s.AllowPrivate, AllowURLPrefixes: s.AllowURLPrefixes}
}

// settings checks the flags and returns them as LLMSettings, guarded by guard.
func (l *llmFlags) settings(guard netguard.Guard) (LLMSettings, error) {
	s := LLMSettings{BaseURLs: map[string]string{}, Timeout: l.timeout, MaxOpenConversations: l.maxOpenConversations,
		AllowPrivate: guard.AllowPrivate, AllowURLPrefixes: guard.AllowURLPrefixes}
	if l.timeout <= 0 {
		return s, fmt.Errorf("--llm-timeout must be more than 0")
	}
	if err := checkMaxOpenConversations(l.maxOpenConversations); err != nil {
		return s, err
	}
	for _, kv := range l.baseURLs {
		provider, u, ok := strings.Cut(kv, "=")
		if !ok || !slices.Contains(data.LLMProviders, provider) {
			return s, fmt.Errorf("--llm-base-url %q: want PROVIDER=URL with PROVIDER one of %s", kv, strings.Join(data.LLMProviders, ", "))
		}
		if err := netguard.CheckURL(u); err != nil {
			return s, fmt.Errorf("--llm-base-url %s: %w", provider, err)
		}
		s.BaseURLs[provider] = u
	}
	return s, nil
}

// checkMaxOpenConversations refuses a --max-open-conversations outside 0 (no bound) to
// validate.MaxOpenConversations: serve's, and the one subscription set shows a plan under.
func checkMaxOpenConversations(n int) error {
	if n < 0 || n > validate.MaxOpenConversations {
		return fmt.Errorf("--max-open-conversations must be 0 (no bound) to %d", validate.MaxOpenConversations)
	}
	return nil
}

// ConversationOptions builds what conversations need from s: model clients of each
// agent's provider and custom function calls, both through the SSRF guard (a base_url,
// an endpoint or a custom_function URL is a URL the server calls, like a webhook's).
func ConversationOptions(s LLMSettings) service.ConversationOptions {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = llm.DefaultTimeout
	}
	models := s.guard().Client(netguard.Options{Timeout: timeout})
	// A custom function's own timeout bounds each call (its context), capped at
	// conversation.MaxFunctionTimeout: the client's.
	functions := s.guard().Client(netguard.Options{Timeout: conversation.MaxFunctionTimeout})
	opts := llm.Options{HTTPClient: models, BaseURLs: s.BaseURLs, Timeout: timeout}
	return service.ConversationOptions{
		Models:       func(cfg data.LLMConfig) (llm.Client, error) { return llm.New(llm.ConfigOf(cfg), opts) },
		Functions:    functions,
		ModelTimeout: timeout,
		MaxOpen:      s.MaxOpenConversations,
	}
}

// expireConversations ends idle conversations (expired) now, then every interval until
// ctx is done.
func expireConversations(ctx context.Context, conv *service.ConversationService, logger *slog.Logger, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		for {
			n, err := conv.ExpireIdle(ctx, 100)
			if err != nil {
				if ctx.Err() == nil && !data.LoggedByStorage(err) {
					logger.Error("ending idle conversations", "error", err)
				}
				break
			}
			if n > 0 {
				logger.Info("ended idle conversations", "count", n)
			}
			if n < 100 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
