package service

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/validate"
)

// DefaultMaxSourcesPerKnowledgeBase is KnowledgeOptions.MaxSources when unset.
const DefaultMaxSourcesPerKnowledgeBase = 1000

// KnowledgeOptions configures knowledge bases.
type KnowledgeOptions struct {
	// MaxSources bounds the sources (texts, urls and files together) of one knowledge
	// base; DefaultMaxSourcesPerKnowledgeBase when 0.
	MaxSources int
	// Embedder, when set, is the operator's embedding provider: the default of every
	// workspace that names none (docs/knowledge-bases.md). Nil means lexical retrieval
	// only, unless a workspace names its own.
	Embedder knowledge.Embedder
	// EmbeddingSpace names the vectors Embedder makes (EmbeddingSpace of its url and
	// model); a change re-embeds what the operator's provider embedded. "operator" when "".
	EmbeddingSpace string
	// EmbeddingModel is Embedder's model, shown on knowledge bases.
	EmbeddingModel string
	// EmbedClient sends workspaces' embedding requests: the SSRF-guarded client (serve
	// builds it with --allow-private-urls); a plain one when nil (tests).
	EmbedClient *http.Client
}

// SourceLimit is MaxSources with its default applied.
func (o KnowledgeOptions) SourceLimit() int {
	if o.MaxSources > 0 {
		return o.MaxSources
	}
	return DefaultMaxSourcesPerKnowledgeBase
}

// KnowledgeBaseService implements data.KnowledgeBaseService: knowledge bases of the
// caller's workspace, their sources (texts, urls, files), and retrieval over an in-memory
// index per knowledge base built from the stored chunks.
type KnowledgeBaseService struct {
	*base
	// fetcher fetches url sources for their jobs (UseURLFetcher); nil until set.
	fetcher atomic.Pointer[fetcherBox]
}

var _ data.KnowledgeBaseService = (*KnowledgeBaseService)(nil)

func newKnowledgeBases(b *base) *KnowledgeBaseService {
	return &KnowledgeBaseService{base: b}
}

// checkURL is the outbound check of source urls (conventions §14), Options.URLGuard.
func (s *KnowledgeBaseService) checkURL() func(string) error { return s.urlGuard }

// callerWorkspace is the workspace the caller acts in; without a caller there is none,
// and knowledge bases, all workspace-scoped, are not found.
func callerWorkspace(ctx context.Context) (string, error) {
	if p := data.PrincipalFrom(ctx); p != nil {
		return p.WorkspaceID, nil
	}
	return "", data.NotFound("Knowledge base")
}

// loadKB reads a knowledge base of the caller's workspace, without its sources; anything
// else is not found.
func loadKB(ctx context.Context, tx Tx, id string) (*data.KnowledgeBase, error) {
	ws, err := callerWorkspace(ctx)
	if err != nil {
		return nil, err
	}
	if !data.ValidID(data.PrefixKnowledgeBase, id) {
		return nil, data.NotFound("Knowledge base")
	}
	kb, err := tx.KnowledgeBase(id)
	if err != nil {
		return nil, err
	}
	if kb == nil || kb.WorkspaceID != ws {
		return nil, data.NotFound("Knowledge base")
	}
	return kb, nil
}

// errKnowledgeBaseOfHiddenAgent refuses a change of a knowledge base an agent outside the
// caller's agent_ids uses (visibility.knowledgeBaseWritable); the agent is not named
// (conventions §2: its existence is never revealed).
func errKnowledgeBaseOfHiddenAgent() error {
	return data.Errorf(data.EFORBIDDEN, data.KnowledgeBaseOfHiddenAgent)
}

// checkKnowledgeBaseWritable refuses, in tx, a change of kb by the caller that would
// change what an agent it does not see retrieves.
func checkKnowledgeBaseWritable(ctx context.Context, tx Tx, kb *data.KnowledgeBase) error {
	ok, err := agentsLetChange(ctx, tx, kb)
	if err != nil {
		return err
	}
	if !ok {
		return errKnowledgeBaseOfHiddenAgent()
	}
	return nil
}

// agentsLetChange reports whether every agent using kb is one the caller sees
// (visibility.knowledgeBaseWritable); only a caller limited to some agents reads them.
func agentsLetChange(ctx context.Context, tx Tx, kb *data.KnowledgeBase) (bool, error) {
	v := visibilityOf(data.PrincipalFrom(ctx))
	if v.allAgents() {
		return true, nil
	}
	using, err := tx.AgentsUsingKnowledgeBase(kb.WorkspaceID, kb.ID)
	if err != nil {
		return false, err
	}
	return v.knowledgeBaseWritable(using), nil
}

// fillKnowledgeBaseAccess sets kb.Access to what the caller may do with it, by the rules its writes
// are refused by: the route's requirement (role, module, key scope) and
// checkKnowledgeBaseWritable. A client learns it from a read, never by trying a write.
func fillKnowledgeBaseAccess(ctx context.Context, tx Tx, kb *data.KnowledgeBase) error {
	if p := data.PrincipalFrom(ctx); p != nil && p.Allows(data.Write(data.ModuleKnowledgeBase)) != nil {
		kb.Access = data.Access{}
		return nil
	}
	ok, err := agentsLetChange(ctx, tx, kb)
	kb.Access = data.Access{Write: ok}
	return err
}

// changedKnowledgeBaseAccess is fillKnowledgeBaseAccess for a knowledge base the caller
// has just created (no agent uses it yet) or changed, checkKnowledgeBaseWritable having
// passed in the same transaction: the agents using it are not read a second time, which
// for a caller limited to some agents is a read of every agent and version of the
// workspace, in the write's transaction.
func changedKnowledgeBaseAccess(ctx context.Context, kb *data.KnowledgeBase) {
	p := data.PrincipalFrom(ctx)
	kb.Access = data.Access{Write: p == nil || p.Allows(data.Write(data.ModuleKnowledgeBase)) == nil}
}

// loadKBForChange loads a knowledge base about to change with its sources and embeddings,
// as the caller last saw it, refusing a stale If-Match and a caller who may not change it
// (checkKnowledgeBaseWritable).
func (s *KnowledgeBaseService) loadKBForChange(ctx context.Context, tx Tx, id string) (*data.KnowledgeBase, error) {
	kb, err := loadKB(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if err := tx.KnowledgeBaseSources(kb); err != nil {
		return nil, err
	}
	if err := s.fillEmbeddings(tx, kb); err != nil {
		return nil, err
	}
	if err := data.CheckIfMatch(data.IfMatch(ctx), kb); err != nil {
		return nil, err
	}
	if err := checkKnowledgeBaseWritable(ctx, tx, kb); err != nil {
		return nil, err
	}
	return kb, nil
}

// ListKnowledgeBases implements data.KnowledgeBaseService.
func (s *KnowledgeBaseService) ListKnowledgeBases(ctx context.Context, req data.PageRequest) ([]*data.KnowledgeBase, data.Page, error) {
	ws, err := callerWorkspace(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	var list []*data.KnowledgeBase
	var page data.Page
	err = s.store.View(ctx, func(tx Tx) error {
		var err error
		if list, page, err = tx.KnowledgeBasePage(ws, req); err != nil {
			return err
		}
		p, err := s.workspaceProvider(tx, ws)
		if err != nil {
			return err
		}
		for _, kb := range list {
			if err := fillEmbeddingsWith(tx, kb, p); err != nil {
				return err
			}
		}
		return nil
	})
	return list, page, err
}

// CreateKnowledgeBase implements data.KnowledgeBaseService. Texts are chunked before the
// transaction; urls are left pending for the fetcher.
func (s *KnowledgeBaseService) CreateKnowledgeBase(ctx context.Context, in data.KnowledgeBaseCreate) (*data.KnowledgeBase, error) {
	if err := checkInput(ctx, validate.KnowledgeBaseCreate(in, s.checkURL())); err != nil {
		return nil, err
	}
	add := data.SourcesAdd{Texts: in.Texts, URLs: in.URLs}
	if n := len(in.Texts) + len(in.URLs); n > s.opts.Knowledge.SourceLimit() {
		return nil, tooManySources(sourcesField(add), s.opts.Knowledge.SourceLimit(), 0, n)
	}
	ws, err := callerWorkspace(ctx)
	if err != nil {
		return nil, err
	}
	now := s.timeNow()
	kb := &data.KnowledgeBase{ID: s.ids.New(data.PrefixKnowledgeBase), Name: in.Name, WorkspaceID: ws, CreatedAt: now, UpdatedAt: now}
	prepared := s.prepareSources(ctx, kb, add, nil)
	var out *data.KnowledgeBase
	err = s.store.Update(ctx, func(tx Tx) error {
		if err := checkQuota(tx, ws, data.LimitKnowledgeBases); err != nil {
			return err
		}
		if err := tx.InsertKnowledgeBase(kb); err != nil {
			return err
		}
		if err := s.storeSources(ctx, tx, kb, prepared); err != nil {
			return err
		}
		out = &data.KnowledgeBase{ID: kb.ID, Name: kb.Name, WorkspaceID: ws, CreatedAt: now, UpdatedAt: now}
		if err := tx.KnowledgeBaseSources(out); err != nil {
			return err
		}
		if err := s.fillEmbeddings(tx, out); err != nil {
			return err
		}
		changedKnowledgeBaseAccess(ctx, out)
		// The event's data is the record; the claim keeps the answer, access beside it.
		answerClaim(ctx, out, data.AccessAnswer(out.Access))
		_, err := s.record(ctx, tx, data.EventKnowledgeBaseCreated, ws, out)
		return err
	})
	return out, err
}

// KnowledgeBase implements data.KnowledgeBaseService.
func (s *KnowledgeBaseService) KnowledgeBase(ctx context.Context, id string) (*data.KnowledgeBase, error) {
	var out *data.KnowledgeBase
	err := s.store.View(ctx, func(tx Tx) error {
		kb, err := loadKB(ctx, tx, id)
		if err != nil {
			return err
		}
		out = kb
		if err := tx.KnowledgeBaseSources(kb); err != nil {
			return err
		}
		if err := s.fillEmbeddings(tx, kb); err != nil {
			return err
		}
		return fillKnowledgeBaseAccess(ctx, tx, kb)
	})
	return out, err
}

// UpdateKnowledgeBase implements data.KnowledgeBaseService.
func (s *KnowledgeBaseService) UpdateKnowledgeBase(ctx context.Context, id string, in data.KnowledgeBaseUpdate) (*data.KnowledgeBase, error) {
	if err := checkInput(ctx, validate.KnowledgeBaseUpdate(in)); err != nil {
		return nil, err
	}
	var out *data.KnowledgeBase
	err := s.store.Update(ctx, func(tx Tx) error {
		kb, err := s.loadKBForChange(ctx, tx, id)
		if err != nil {
			return err
		}
		out = kb
		changedKnowledgeBaseAccess(ctx, kb)
		if !in.Name.Set || in.Name.V == kb.Name {
			return errNothingToWrite // nothing changed: no write, no event
		}
		kb.Name, kb.UpdatedAt = in.Name.V, s.timeNow()
		if err := tx.PutKnowledgeBase(kb); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventKnowledgeBaseUpdated, kb.WorkspaceID, kb)
		return err
	})
	return out, err
}

// DeleteKnowledgeBase implements data.KnowledgeBaseService.
func (s *KnowledgeBaseService) DeleteKnowledgeBase(ctx context.Context, id string) error {
	return s.store.Update(ctx, func(tx Tx) error {
		kb, err := s.loadKBForChange(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteKnowledgeBase(kb); err != nil {
			return err
		}
		tx.OnCommit(func() { s.kbIndexes.drop(kb.ID) })
		_, err = s.record(ctx, tx, data.EventKnowledgeBaseDeleted, kb.WorkspaceID, kb)
		return err
	})
}
