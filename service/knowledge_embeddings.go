package service

// Embeddings per workspace (docs/knowledge-bases.md, "Embeddings"). A workspace names its
// own OpenAI-compatible provider, or uses the operator's (serve's --embeddings-url). The
// vectors of each source are computed in the background by the knowledge_base.embed job
// and stored with the source's embedding space, a name of the provider's address and
// model: vectors of two models are not comparable, so retrieval uses a source's vectors
// only while its space is the workspace's current one, and a change of provider or model
// re-embeds every source.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/validate"
)

// embedProvider is the embedding provider a workspace uses now.
type embedProvider struct {
	space    string // EmbeddingSpace of the vectors it makes
	model    string
	embedder knowledge.Embedder
}

// EmbeddingSpace names the vectors a provider makes: its API root and model. The key is
// no part of it: a rotated key makes the same vectors.
func EmbeddingSpace(baseURL, model string) string {
	sum := sha256.Sum256([]byte(baseURL + "\x00" + model))
	return hex.EncodeToString(sum[:12])
}

// providers caches the embedders of workspaces with their own provider, by the setting
// they were built from, so a query does not build a client each time.
type providers struct {
	mu sync.Mutex
	m  map[string]*embedProvider // workspace id + setting → provider
}

// providerFor returns the provider workspace w uses: its own, else the operator's, else
// nil (embeddings off, or turned off by the workspace).
func (b *base) providerFor(w *data.WorkspaceRecord) (*embedProvider, error) {
	if w != nil && !w.Embeddings.IsEnabled() {
		return nil, nil
	}
	if w != nil && w.Embeddings.Configured() {
		url, model := *w.Embeddings.BaseURL, *w.Embeddings.Model
		cacheKey := w.ID + "\x00" + url + "\x00" + model + "\x00" + w.EmbeddingsKey
		b.providers.mu.Lock()
		defer b.providers.mu.Unlock()
		if p := b.providers.m[cacheKey]; p != nil {
			return p, nil
		}
		key := ""
		if w.EmbeddingsKey != "" {
			var err error
			if key, err = b.sealer.Open(w.EmbeddingsKey); err != nil {
				return nil, fmt.Errorf("opening the workspace's embeddings api_key: %w", err)
			}
		}
		p := &embedProvider{space: EmbeddingSpace(url, model), model: model, embedder: knowledge.NewOpenAIEmbedder(
			knowledge.OpenAIEmbedderConfig{BaseURL: url, Model: model, APIKey: key, Client: embedClientOr(b.opts.Knowledge.EmbedClient)})}
		if b.providers.m == nil {
			b.providers.m = map[string]*embedProvider{}
		}
		b.providers.m[cacheKey] = p
		return p, nil
	}
	k := b.opts.Knowledge
	if k.Embedder == nil {
		return nil, nil
	}
	space := k.EmbeddingSpace
	if space == "" {
		space = "operator"
	}
	return &embedProvider{space: space, model: k.EmbeddingModel, embedder: k.Embedder}, nil
}

// workspaceFusion is how the hybrid queries of workspace w fuse: the default, with the
// workspace's vector share when it chose one.
func workspaceFusion(w *data.WorkspaceRecord) knowledge.Fusion {
	f := knowledge.DefaultFusion
	if w != nil && w.Embeddings.VectorShare != nil {
		f.VectorWeight = *w.Embeddings.VectorShare
	}
	return f
}

// workspaceProvider reads workspace wsID and returns its provider (nil: off).
func (b *base) workspaceProvider(tx Tx, wsID string) (*embedProvider, error) {
	w, err := tx.Workspace(wsID)
	if err != nil {
		return nil, err
	}
	return b.providerFor(w)
}

// embedClientOr is the client of workspaces' providers: Options.Knowledge.EmbedClient (the
// SSRF-guarded one serve builds), else a plain one with the embedder's timeout.
func embedClientOr(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: knowledge.DefaultEmbedTimeout}
}

// fillEmbeddings sets kb.Embeddings: the current provider's model, how many of its
// indexed sources have vectors of it, and the last failure.
func (s *KnowledgeBaseService) fillEmbeddings(tx Tx, kb *data.KnowledgeBase) error {
	p, err := s.workspaceProvider(tx, kb.WorkspaceID)
	if err != nil {
		return err
	}
	return fillEmbeddingsWith(tx, kb, p)
}

// fillEmbeddingsWith is fillEmbeddings with the workspace's provider p already read (a
// page of knowledge bases shares one).
func fillEmbeddingsWith(tx Tx, kb *data.KnowledgeBase, p *embedProvider) error {
	e := &data.KnowledgeEmbeddings{Status: data.EmbeddingsOff, Error: kb.EmbeddingError}
	kb.Embeddings = e
	if p == nil {
		e.Error = nil
		return nil
	}
	if p.model != "" {
		e.Model = &p.model
	}
	sources, err := tx.KnowledgeSources(kb.ID)
	if err != nil {
		return err
	}
	for _, src := range sources {
		if src.Status == data.SourceIndexed || src.EmbeddingSpace != "" {
			e.Progress.Total++
			if src.EmbeddingSpace == p.space {
				e.Progress.Done++
			}
		}
	}
	switch {
	case e.Error != nil:
		e.Status = data.EmbeddingsFailing
	case e.Progress.Done < e.Progress.Total:
		e.Status = data.EmbeddingsInProgress
	default:
		e.Status = data.EmbeddingsReady
	}
	return nil
}

// queryEmbedTimeout bounds the embedding of a query.
const queryEmbedTimeout = 3 * time.Second

// embedQuery embeds a query once with provider p (nil: none) and returns its vector and
// the space the index's vectors must be of; a provider that fails leaves the query
// lexical (nil, "").
func (s *KnowledgeBaseService) embedQuery(ctx context.Context, p *embedProvider, query string) ([]float32, string) {
	if p == nil {
		return nil, ""
	}
	// A caller is waiting (a voice runtime, mid-call): a provider that hangs costs it
	// queryEmbedTimeout at most, then the answer is lexical.
	ctx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
	defer cancel()
	vecs, err := p.embedder.Embed(ctx, []string{query})
	if err != nil || len(vecs) != 1 {
		s.log.Warn("embedding a query failed; searching lexically", "error", err)
		return nil, ""
	}
	return vecs[0], p.space
}

// resumeEmbeddings queues again the embed job of those knowledge bases whose embedding
// failed: the provider just answered, so it is back. A knowledge base with its job still
// pending keeps it (the unique key), due now rather than after its retry's backoff.
func (s *KnowledgeBaseService) resumeEmbeddings(ctx context.Context, ws string, kbIDs []string) {
	var failed []string
	_ = s.store.View(ctx, func(tx Tx) error {
		for _, id := range kbIDs {
			if kb, err := tx.KnowledgeBase(id); err == nil && kb != nil && kb.EmbeddingError != nil {
				failed = append(failed, id)
			}
		}
		return nil
	})
	if len(failed) == 0 {
		return
	}
	err := s.store.Update(context.WithoutCancel(ctx), func(tx Tx) error {
		for _, id := range failed {
			j, err := s.enqueueEmbedJob(tx, ws, id)
			if err != nil {
				return err
			}
			if j != nil {
				if _, err := tx.HastenJob(j.ID, s.timeNow().Time); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		s.log.Warn("queuing embeddings again after the provider answered", "error", err)
	}
}

// applyEmbeddings merges a workspace's embeddings patch into w: the result is checked, a
// new api_key sealed (the masked value sent back keeps the stored one, null clears it) and
// shown masked. It reports whether the vectors the workspace uses change (another
// provider address or model, or the operator's default instead), so that every knowledge
// base of the workspace is embedded again.
func (b *base) applyEmbeddings(tx Tx, w *data.WorkspaceRecord, patch data.WorkspaceEmbeddingsPatch) (bool, error) {
	before, err := b.providerFor(w)
	if err != nil {
		return false, err
	}
	merged := patch.Apply(w.Embeddings)
	if merged.BaseURL == nil && !patch.APIKey.Set {
		merged.APIKey = nil // clearing the provider clears its key
	}
	if err := validate.WorkspaceEmbeddings(merged, b.urlGuard); err != nil {
		return false, err
	}
	if merged.APIKey != nil && merged.BaseURL != nil && w.Embeddings.APIKey != nil && w.Embeddings.BaseURL != nil {
		errs := &validate.Errors{}
		validate.KeptCredentialMoved(errs, "embeddings.api_key", *merged.APIKey == *w.Embeddings.APIKey,
			validate.ProviderAddress("", "", *w.Embeddings.BaseURL), validate.ProviderAddress("", "", *merged.BaseURL))
		if err := errs.Err(); err != nil {
			return false, err
		}
	}
	switch {
	case merged.APIKey == nil || merged.BaseURL == nil:
		merged.APIKey, w.EmbeddingsKey = nil, ""
	case w.Embeddings.APIKey != nil && *merged.APIKey == *w.Embeddings.APIKey:
		// the mask sent back: the stored key stays
	default:
		sealed, err := b.sealer.Seal(*merged.APIKey)
		if err != nil {
			return false, err
		}
		mask := data.MaskSecret(*merged.APIKey)
		merged.APIKey, w.EmbeddingsKey = &mask, sealed
	}
	w.Embeddings = merged
	after, err := b.providerFor(w)
	if err != nil {
		return false, err
	}
	return after != nil && (before == nil || before.space != after.space), nil
}
