package service

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/seal"
	"github.com/voiceapi/voiceapi/validate"
)

// AgentService implements data.AgentService: the agent rules (conventions §7) over AgentTx.
type AgentService struct {
	*base
	cache agentCache
	rows  agentRowCache // rows as stored, for the next update (agent_row_cache.go)
}

var _ data.AgentService = (*AgentService)(nil)

// open returns c with its credentials opened (openConfig).
func (s *AgentService) open(c data.AgentConfig) (data.AgentConfig, error) {
	return openConfig(s.sealer, c)
}

// openConfig returns c, as stored, with its credentials opened: llm_config.api_key and
// the value of each credential header of a custom function (data.IsCredentialHeader). A
// header stored in the clear before headers were sealed is read as it is, and sealed at
// the agent's next write (docs/upgrading.md).
func openConfig(sealer *seal.Sealer, c data.AgentConfig) (data.AgentConfig, error) {
	if c.LLMConfig.APIKey != nil {
		plain, err := sealer.Open(*c.LLMConfig.APIKey)
		if err != nil {
			return c, fmt.Errorf("opening llm_config.api_key: %w", err)
		}
		c.LLMConfig.APIKey = &plain
	}
	return openHeaders(sealer, c)
}

// openHeaders returns c with the value of each credential header opened.
func openHeaders(sealer *seal.Sealer, c data.AgentConfig) (data.AgentConfig, error) {
	c, err := data.MapCredentialHeaders(c, func(v string) (string, error) {
		if !seal.IsSealed(v) {
			return v, nil // stored before headers were sealed
		}
		return sealer.Open(v)
	})
	if err != nil {
		return c, fmt.Errorf("opening a custom_function_headers value: %w", err)
	}
	return c, nil
}

// sealed returns c with its credentials sealed for storage: the api_key and each
// credential header's value.
func (s *AgentService) sealed(c data.AgentConfig) (data.AgentConfig, error) {
	if c.LLMConfig.APIKey != nil {
		sealed, err := s.sealer.Seal(*c.LLMConfig.APIKey)
		if err != nil {
			return c, err
		}
		c.LLMConfig.APIKey = &sealed
	}
	return s.sealedHeaders(c)
}

// sealedHeaders returns c with the value of each credential header sealed.
func (s *AgentService) sealedHeaders(c data.AgentConfig) (data.AgentConfig, error) {
	return data.MapCredentialHeaders(c, s.sealer.Seal)
}

// visible returns row when the caller may see it (its workspace, within its agent_ids),
// else not found; row nil is not found too.
func visible(ctx context.Context, id string, row *data.StoredAgent) error {
	p := data.PrincipalFrom(ctx)
	if row == nil || row.WorkspaceID != p.WorkspaceID || !visibilityOf(p).agent(id) {
		if faults := data.InputFaults(ctx); faults != nil {
			return faults // a body that cannot be read is refused as such, whatever it targets
		}
		return data.NotFound("Agent")
	}
	return nil
}

// load reads an agent the caller may see; stored is the row as stored (api_key sealed),
// plain the same with its api_key opened.
func (s *AgentService) load(ctx context.Context, tx Tx, id string) (stored, plain *data.StoredAgent, err error) {
	row, err := tx.Agent(id)
	if err != nil {
		return nil, nil, err
	}
	return s.opened(ctx, id, row)
}

// opened checks that the caller may see row and returns it with a copy whose api_key is
// opened.
func (s *AgentService) opened(ctx context.Context, id string, row *data.StoredAgent) (stored, plain *data.StoredAgent, err error) {
	if err := visible(ctx, id, row); err != nil {
		return nil, nil, err
	}
	c := *row
	if c.AgentConfig, err = s.open(row.AgentConfig); err != nil {
		return nil, nil, err
	}
	return row, &c, nil
}

// rowJSON is the response encoding out a stored row c may be kept as (AgentTx.PutAgent):
// nil when c has a credential header with a value, which out shows only masked, so that
// the engine encodes the row itself with the header sealed.
func rowJSON(c data.AgentConfig, out json.RawMessage) json.RawMessage {
	hasSecret := false
	_, _ = data.MapCredentialHeaders(c, func(v string) (string, error) {
		hasSecret = true
		return v, nil
	})
	if hasSecret {
		return nil
	}
	return out
}

// masked is the agent as responses and events show it: credentials masked, and the
// variables its configuration uses (computed by the conversation engine, the one parser
// of {{name}} references).
func masked(row *data.StoredAgent) *data.Agent {
	a := row.Agent.Masked()
	// From the plain configuration: a masked header hides the variables its value uses.
	a.UsedVariables = conversation.ConfigVariables(&row.AgentConfig)
	if a.UsedVariables == nil {
		a.UsedVariables = []string{}
	}
	return &a
}

// read returns a visible agent, masked, with its JSON, for a read-only caller that will
// not modify it: from the cache when the stored row is unchanged (agentCache).
func (s *AgentService) read(ctx context.Context, tx Tx, id string) (agentCacheEntry, error) {
	p := data.PrincipalFrom(ctx)
	if !visibilityOf(p).agent(id) {
		return agentCacheEntry{}, data.NotFound("Agent")
	}
	rev, err := tx.AgentRevision(id)
	if err != nil {
		return agentCacheEntry{}, err
	}
	if rev == 0 {
		return agentCacheEntry{}, data.NotFound("Agent")
	}
	if e, ok := s.cache.get(id, rev); ok {
		if e.agent.WorkspaceID != p.WorkspaceID {
			return agentCacheEntry{}, data.NotFound("Agent")
		}
		return e, nil
	}
	_, plain, err := s.load(ctx, tx, id)
	if err != nil {
		return agentCacheEntry{}, err
	}
	return s.cache.put(id, rev, masked(plain))
}

// Agent implements data.AgentService.
func (s *AgentService) Agent(ctx context.Context, id string) (*data.Agent, error) {
	var out *data.Agent
	err := s.store.View(ctx, func(tx Tx) error {
		e, err := s.read(ctx, tx, id)
		if err == nil {
			c := *e.agent // a shallow copy: the caller may set top-level fields
			out = &c
		}
		return err
	})
	return out, err
}

// AgentJSON returns the JSON of an agent as GET /api/v1/agents/{agent_id} sends it (masked):
// the bytes json.Marshal gives for the record Agent returns, without encoding it again
// while the stored row is unchanged.
func (s *AgentService) AgentJSON(ctx context.Context, id string) ([]byte, error) {
	// A cached agent confirmed in one statement (RevisionReader); else a transaction.
	if e, found, err := s.cachedAgent(ctx, id); found {
		return e.json, err
	}
	var out []byte
	err := s.store.View(ctx, func(tx Tx) error {
		e, err := s.read(ctx, tx, id)
		out = e.json
		return err
	})
	return out, err
}

// ListAgents implements data.AgentService.
func (s *AgentService) ListAgents(ctx context.Context, f data.AgentFilter) ([]*data.Agent, data.Page, error) {
	var list []*data.Agent
	page, err := s.list(ctx, f, func(e agentCacheEntry) {
		c := *e.agent // a shallow copy: the caller may set top-level fields
		list = append(list, &c)
	})
	return list, page, err
}

// ListAgentsJSON is ListAgents with each agent as JSON, as AgentJSON gives it.
func (s *AgentService) ListAgentsJSON(ctx context.Context, f data.AgentFilter) ([]json.RawMessage, data.Page, error) {
	var list []json.RawMessage
	page, err := s.list(ctx, f, func(e agentCacheEntry) { list = append(list, e.json) })
	return list, page, err
}

// list reads a page of agents and hands each to add, in order.
func (s *AgentService) list(ctx context.Context, f data.AgentFilter, add func(agentCacheEntry)) (data.Page, error) {
	p := data.PrincipalFrom(ctx)
	if err := validate.AgentFilter(f); err != nil {
		return data.Page{}, err
	}
	var page data.Page
	err := s.store.View(ctx, func(tx Tx) error {
		ids, pg, err := tx.AgentIDs(p.WorkspaceID, f.Status, visibilityOf(p).agents(""), AgentSearch{Name: f.Name, KnowledgeBaseID: f.KnowledgeBaseID, MaxScan: data.MaxAgentSearchScan}, f.PageRequest)
		if err != nil {
			return err
		}
		page = pg
		// The cached entries confirmed in one statement (AgentRevisionsTx); the rest
		// one by one.
		cached, hit, err := s.cachedAgents(ctx, tx, ids)
		if err != nil {
			return err
		}
		for i, id := range ids {
			if hit != nil && hit[i] {
				add(cached[i])
				continue
			}
			e, err := s.read(ctx, tx, id)
			if err != nil {
				return err
			}
			add(e)
		}
		return nil
	})
	return page, err
}

// inputFaults returns the faults the server found decoding the input (data.InputFaults),
// as the start of a 422.
func inputFaults(ctx context.Context) *validate.Errors {
	errs := &validate.Errors{}
	if e, ok := data.InputFaults(ctx).(*data.Error); ok {
		errs.AddError(e)
	}
	return errs
}

// checkAgent returns the faults of merged, the result of in on a stored agent (on the
// defaults when creating): the decoder's first, then the rules' that they do not cover
// (a member that is not a number needs no "is required" beside it).
func (s *AgentService) checkAgent(ctx context.Context, merged *data.Agent, in *data.AgentUpdate, creating bool) *validate.Errors {
	errs := inputFaults(ctx)
	errs.AddUncovered(validate.AgentChange(merged, in, creating, s.catalog))
	return errs
}

// withReferences returns errs with a fault for each knowledge_base_ids entry of a that is
// not a knowledge base of the workspace, read in tx. errs is not modified: a write
// transaction's function may run twice.
func withReferences(tx Tx, workspaceID string, a *data.Agent, errs *validate.Errors) (*validate.Errors, error) {
	out := &validate.Errors{}
	out.AddUncovered(errs)
	var readErr error
	validate.KnowledgeBaseRefs(a.LLMConfig.KnowledgeBaseIDs, func(id string) bool {
		ok, err := tx.KnowledgeBaseExists(workspaceID, id)
		if err != nil && readErr == nil {
			readErr = err
		}
		return ok
	}, out)
	return out, readErr
}

// CreateAgent implements data.AgentService: the body merged into the defaults, a draft.
func (s *AgentService) CreateAgent(ctx context.Context, in data.AgentCreate) (*data.Agent, error) {
	out, _, err := s.CreateAgentJSON(ctx, in)
	return out, err
}

// CreateAgentJSON is CreateAgent with the agent's JSON as the response sends it: the
// bytes stored, recorded in the agent.created event and hashed for the ETag, encoded once.
func (s *AgentService) CreateAgentJSON(ctx context.Context, in data.AgentCreate) (*data.Agent, json.RawMessage, error) {
	p := data.PrincipalFrom(ctx)
	u := (*data.AgentUpdate)(&in)
	a := u.Apply(data.DefaultAgent())
	faults := s.checkAgent(ctx, a, u, true)
	cfg, err := s.sealed(a.AgentConfig)
	if err != nil {
		return nil, nil, err
	}
	// The row and its encoding are made before the transaction: writers run their
	// transaction functions one after another inside a shared commit (see UpdateAgent).
	// A function run again reuses them, id and times included.
	now := s.timeNow()
	row := &data.StoredAgent{Agent: *a}
	row.ID, row.WorkspaceID, row.Status = s.ids.New(data.PrefixAgent), p.WorkspaceID, data.AgentStatusDraft
	row.CreatedAt, row.UpdatedAt, row.PublishedVersion, row.PublishedAt = now, now, nil, nil
	out := masked(row)
	enc, err := out.AppendJSON(nil)
	if err != nil {
		return nil, nil, err
	}
	outJSON := json.RawMessage(enc) // record takes a RawMessage as is (a []byte would be base64)
	stored := *row
	stored.AgentConfig, stored.JSON = cfg, rowJSON(cfg, outJSON)
	var storedRev uint64
	err = s.store.Update(ctx, func(tx Tx) error {
		errs, err := withReferences(tx, p.WorkspaceID, a, faults)
		if err != nil {
			return err
		}
		if err := errs.Err(); err != nil {
			return err
		}
		if err := checkQuota(tx, p.WorkspaceID, data.LimitAgents); err != nil {
			return err
		}
		if err := tx.PutAgent(&stored, ""); err != nil {
			return err
		}
		if storedRev, err = storedRevision(tx, stored.ID); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventAgentCreated, p.WorkspaceID, outJSON)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	s.rows.put(stored.ID, storedRev, &stored)
	return out, outJSON, nil
}
