package knowledge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/redact"
)

// Embedder turns texts into vectors, one per text in the same order. Lexical search needs no
// embedder; one is used only when the operator configures an embeddings endpoint.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Limits of the embeddings client. The response cap is generous for 96 inputs of 3,072
// dimensions written as JSON numbers, and stops a misbehaving endpoint from exhausting memory.
const (
	DefaultEmbedTimeout    = 30 * time.Second
	DefaultEmbedBatch      = 96
	maxEmbedResponseBytes  = 64 << 20
	maxEmbedInputChars     = 32 << 10
	maxEmbedErrorBodyBytes = 2 << 10
)

// OpenAIEmbedderConfig configures an OpenAI-compatible embeddings endpoint.
type OpenAIEmbedderConfig struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1"; "/embeddings" is appended.
	BaseURL string
	APIKey  string
	Model   string
	// Client sends the requests; nil means a client with Timeout. Pass the server's outbound
	// client when the endpoint is operator-configured but should still obey the SSRF guard.
	Client  *http.Client
	Timeout time.Duration
	// BatchSize is how many texts go in one request; 0 means 96.
	BatchSize int
}

// OpenAIEmbedder calls POST {BaseURL}/embeddings with {"model", "input"} and a bearer token,
// the API that OpenAI, Azure OpenAI-style gateways, Ollama, vLLM and LiteLLM all serve.
type OpenAIEmbedder struct {
	cfg OpenAIEmbedderConfig
}

// NewOpenAIEmbedder returns an embedder for the configured endpoint.
func NewOpenAIEmbedder(cfg OpenAIEmbedderConfig) *OpenAIEmbedder {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultEmbedTimeout
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: cfg.Timeout}
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultEmbedBatch
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &OpenAIEmbedder{cfg: cfg}
}

var _ Embedder = (*OpenAIEmbedder)(nil)

// Embed returns one vector per text, sending them in batches. Texts longer than 32,768
// characters are cut (a chunk never is; a query rarely), since endpoints refuse over-long input.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.cfg.BatchSize {
		batch := texts[start:min(len(texts), start+e.cfg.BatchSize)]
		vecs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && len(vecs) > 0 && len(vecs[0]) != len(out[0]) {
			return nil, errors.New("embeddings: the endpoint changed vector dimensions between batches")
		}
		out = append(out, vecs...)
	}
	return out, nil
}

type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

func (e *OpenAIEmbedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	input := make([]string, len(texts))
	for i, t := range texts {
		input[i] = truncateRunes(t, maxEmbedInputChars)
		if strings.TrimSpace(input[i]) == "" {
			input[i] = " " // endpoints refuse empty strings; a blank gets a neutral vector
		}
	}
	body, err := json.Marshal(embedRequest{Model: e.cfg.Model, Input: input})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.BaseURL+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
	}
	resp, err := e.cfg.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, maxEmbedErrorBodyBytes))
		// The answer is kept as the knowledge base's last failure, which every reader of
		// it sees: a provider echoing the key or the Authorization header must not show it.
		said := redact.Secrets(strings.TrimSpace(string(snippet)), e.cfg.APIKey)
		return nil, fmt.Errorf("embeddings: endpoint answered %d: %s", resp.StatusCode, said)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbedResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("embeddings: reading the response: %w", err)
	}
	if len(raw) > maxEmbedResponseBytes {
		return nil, fmt.Errorf("embeddings: response larger than %d MiB", maxEmbedResponseBytes>>20)
	}
	var parsed embedResponse
	if err := json.Unmarshal(raw, &parsed); err != nil {
		return nil, fmt.Errorf("embeddings: malformed response: %w", err)
	}
	if len(parsed.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings: %d vectors for %d inputs", len(parsed.Data), len(texts))
	}
	vecs := make([][]float32, len(texts))
	for _, d := range parsed.Data {
		if d.Index < 0 || d.Index >= len(texts) || vecs[d.Index] != nil {
			return nil, fmt.Errorf("embeddings: bad or repeated index %d", d.Index)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != len(parsed.Data[0].Embedding) {
			return nil, errors.New("embeddings: vectors of differing or zero dimensions")
		}
		vecs[d.Index] = d.Embedding
	}
	return vecs, nil
}

func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
