package llm

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/voiceapi/voiceapi/data"
)

// DefaultTimeout bounds a whole completion, streamed or not, when Options.Timeout is 0.
const DefaultTimeout = 60 * time.Second

// DefaultBaseURLs are the public providers' API roots; Options.BaseURLs overrides them.
// internal has none (the agent's base_url), azure neither (its endpoint), and Bedrock's
// follows from the region.
var DefaultBaseURLs = map[string]string{
	data.LLMGroq:    "https://api.groq.com/openai/v1",
	data.LLMMistral: "https://api.mistral.ai/v1",
}

// Config is an agent's llm_config as the adapters need it: the provider, the model, and
// where and as whom to reach it. APIKey is in clear: the caller unseals it. Temperature
// and max_tokens travel with each Request.
type Config struct {
	Provider string
	Model    string
	// APIKey is the provider's key; for bedrock_claude ACCESS_KEY_ID:SECRET_ACCESS_KEY.
	// Empty means none (internal) or the operator's AWS credentials (bedrock_claude).
	APIKey string
	// BaseURL is internal's OpenAI-compatible root, such as http://127.0.0.1:11434/v1.
	BaseURL string
	// Endpoint, Deployment and APIVersion name an Azure OpenAI deployment.
	Endpoint   string
	Deployment string
	APIVersion string
	// Region is bedrock_claude's AWS region.
	Region string
}

// ConfigOf returns the adapter's view of an agent's llm_config, whose api_key the caller
// has unsealed.
func ConfigOf(c data.LLMConfig) Config {
	cfg := Config{
		Provider: c.Provider, Model: c.Model, BaseURL: c.BaseURL, Endpoint: c.Endpoint,
		Deployment: c.Deployment, APIVersion: c.APIVersion, Region: c.Region,
	}
	if c.APIKey != nil {
		cfg.APIKey = *c.APIKey
	}
	return cfg
}

// Options are the operator's settings, the same for every agent.
type Options struct {
	// HTTPClient carries every request to a provider; the server passes its SSRF-guarded
	// client (conventions §14). Its own Timeout is ignored: Timeout below bounds a
	// completion, and a streamed reply may rightly take longer than a webhook post. Nil
	// means a plain client.
	HTTPClient *http.Client
	// BaseURLs replaces a provider's API root (--llm-base-url PROVIDER=URL), for gateways
	// and tests: for internal it replaces the agent's base_url, for azure its endpoint,
	// for bedrock_claude the regional endpoint.
	BaseURLs map[string]string
	// Timeout bounds a whole completion; 0 means DefaultTimeout.
	Timeout time.Duration
	// AWSCredentials signs the requests of a bedrock_claude agent that has no api_key of
	// its own; nil means the standard AWS credential chain (environment, shared files, SSO,
	// web identity, container and instance roles), loaded once per process.
	AWSCredentials aws.CredentialsProvider
}

// New returns the client of cfg's provider. A configuration it cannot use (an unknown
// provider, a missing field, a base URL that is not http or https) is an *Error naming
// the provider.
func New(cfg Config, opts Options) (Client, error) {
	b, err := newBase(cfg, opts)
	if err != nil {
		return nil, err
	}
	switch cfg.Provider {
	case data.LLMInternal, data.LLMGroq, data.LLMMistral, data.LLMAzure:
		return newOpenAI(b, cfg, opts)
	case data.LLMBedrockClaude:
		return newBedrock(b, cfg, opts)
	}
	return nil, &Error{Provider: cfg.Provider, Message: fmt.Sprintf("unknown language model provider %q", cfg.Provider)}
}

// base is what every adapter shares: its provider's name, the bound on a completion, the
// HTTP client, and the secrets to scrub from what a provider says.
type base struct {
	provider string
	timeout  time.Duration
	http     *http.Client
	secrets  []string
}

func (b *base) Provider() string { return b.provider }

func newBase(cfg Config, opts Options) (*base, error) {
	b := &base{provider: cfg.Provider, timeout: opts.Timeout, http: &http.Client{}}
	if b.timeout <= 0 {
		b.timeout = DefaultTimeout
	}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient // a copy: the completion's own bound replaces the client's
		c.Timeout = 0
		b.http = &c
	}
	if cfg.APIKey != "" {
		b.secrets = append(b.secrets, cfg.APIKey)
		// Bedrock's key is two or three parts; each may be echoed alone.
		if cfg.Provider == data.LLMBedrockClaude {
			b.secrets = append(b.secrets, strings.SplitN(cfg.APIKey, ":", 3)...)
		}
	}
	return b, nil
}

// baseURL returns the provider's API root: the operator's override, else def.
func (b *base) baseURL(opts Options, def string) (string, error) {
	u := def
	if o := opts.BaseURLs[b.provider]; o != "" {
		u = o
	}
	if u == "" {
		return "", b.configError("no base URL is configured")
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", b.configError(fmt.Sprintf("the base URL %q is not an http or https URL", u))
	}
	return strings.TrimSuffix(u, "/"), nil
}

func (b *base) configError(msg string) *Error {
	return &Error{Provider: b.provider, Message: b.scrub(msg)}
}

// require returns a configuration error naming the first empty field.
func (b *base) require(fields ...[2]string) error {
	for _, f := range fields {
		if strings.TrimSpace(f[1]) == "" {
			return b.configError("llm_config." + f[0] + " is not set")
		}
	}
	return nil
}
