package bolt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.AgentService = (*DB)(nil)

// agentRow is an agent as stored: llm_config.api_key sealed, and the number of the last
// version published (versions are never renumbered, even after a restore).
type agentRow struct {
	data.Agent
	LastVersion int `json:"last_version"`
}

// versionRow is a version as stored, api_key sealed.
type versionRow struct {
	data.AgentVersion
}

func versionKey(agentID string, n int) []byte { return indexKey(agentID, fmt.Sprintf("%010d", n)) }

func statusScope(workspaceID, status string) string { return workspaceID + "/" + status }

// loadAgentRow reads an agent the caller may see, api_key unsealed; anything else is not
// found (another workspace, outside agent_ids, unknown).
func (db *DB) loadAgentRow(ctx context.Context, tx *bbolt.Tx, id string) (*agentRow, error) {
	p := data.PrincipalFrom(ctx)
	var row agentRow
	found, err := getJSON(tx.Bucket(bucketAgents), []byte(id), &row)
	if err != nil {
		return nil, err
	}
	if !found || row.WorkspaceID != p.WorkspaceID || !p.CanSeeAgent(id) {
		return nil, data.NotFound("Agent")
	}
	if err := db.unsealConfig(&row.AgentConfig); err != nil {
		return nil, err
	}
	return &row, nil
}

// readAgentEntry returns a visible agent, masked, with its JSON, for a read-only caller
// that will not modify it: from the cache when the stored row is unchanged (agentCache).
func (db *DB) readAgentEntry(ctx context.Context, tx *bbolt.Tx, id string) (agentCacheEntry, error) {
	p := data.PrincipalFrom(ctx)
	raw := tx.Bucket(bucketAgents).Get([]byte(id))
	if raw == nil || !p.CanSeeAgent(id) {
		return agentCacheEntry{}, data.NotFound("Agent")
	}
	if e, ok := db.agents.get(id, raw); ok {
		if e.agent.WorkspaceID != p.WorkspaceID {
			return agentCacheEntry{}, data.NotFound("Agent")
		}
		return e, nil
	}
	row, err := db.loadAgentRow(ctx, tx, id)
	if err != nil {
		return agentCacheEntry{}, err
	}
	return db.agents.put(id, raw, masked(row))
}

func (db *DB) unsealConfig(c *data.AgentConfig) error {
	if c.LLMConfig.APIKey == nil {
		return nil
	}
	plain, err := db.sealer.Open(*c.LLMConfig.APIKey)
	if err != nil {
		return fmt.Errorf("opening llm_config.api_key: %w", err)
	}
	c.LLMConfig.APIKey = &plain
	return nil
}

// sealedConfig returns a copy of c whose api_key is sealed for storage.
func (db *DB) sealedConfig(c data.AgentConfig) (data.AgentConfig, error) {
	if c.LLMConfig.APIKey == nil {
		return c, nil
	}
	sealed, err := db.sealer.Seal(*c.LLMConfig.APIKey)
	if err != nil {
		return c, err
	}
	c.LLMConfig.APIKey = &sealed
	return c, nil
}

// putAgentRow stores row (plain api_key in memory) sealed, and moves its status index
// entry from oldStatus.
func (db *DB) putAgentRow(tx *bbolt.Tx, row *agentRow, oldStatus string) error {
	stored := *row
	cfg, err := db.sealedConfig(row.AgentConfig)
	if err != nil {
		return err
	}
	stored.AgentConfig = cfg
	if err := putJSON(tx.Bucket(bucketAgents), []byte(row.ID), stored); err != nil {
		return err
	}
	if oldStatus != row.Status {
		idx := tx.Bucket(bucketAgentsByState)
		if oldStatus != "" {
			if err := indexDelete(idx, statusScope(row.WorkspaceID, oldStatus), row.ID); err != nil {
				return err
			}
		}
		return indexPut(idx, statusScope(row.WorkspaceID, row.Status), row.ID)
	}
	return nil
}

func masked(row *agentRow) *data.Agent {
	a := row.Agent.Masked()
	return &a
}

// ListAgents implements data.AgentService.
func (db *DB) ListAgents(ctx context.Context, f data.AgentFilter) ([]*data.Agent, data.Page, error) {
	var list []*data.Agent
	page, err := db.listAgents(ctx, f, func(e agentCacheEntry) {
		c := *e.agent // a shallow copy: the caller may set top-level fields
		list = append(list, &c)
	})
	return list, page, err
}

// listAgents reads a page of agents and hands each to add, in order.
func (db *DB) listAgents(ctx context.Context, f data.AgentFilter, add func(agentCacheEntry)) (data.Page, error) {
	p := data.PrincipalFrom(ctx)
	if f.Status != "" && f.Status != data.AgentStatusDraft && f.Status != data.AgentStatusPublished {
		return data.Page{}, data.FieldError("status", "The selected status is invalid; it must be one of: draft, published.")
	}
	index, scope := bucketAgentsByWS, p.WorkspaceID
	if f.Status != "" {
		index, scope = bucketAgentsByState, statusScope(p.WorkspaceID, f.Status)
	}
	var keep func(string) bool
	if len(p.AgentIDs) > 0 {
		keep = p.CanSeeAgent
	}
	var page data.Page
	err := db.view(func(tx *bbolt.Tx) error {
		ids, pg, err := db.pageWhere(tx, index, scope, f.PageRequest, keep)
		if err != nil {
			return err
		}
		page = pg
		for _, id := range ids {
			e, err := db.readAgentEntry(ctx, tx, id)
			if err != nil {
				return err
			}
			add(e)
		}
		return nil
	})
	return page, err
}

// checkKnowledgeBases adds a fault for each knowledge_base_ids entry that is not a
// knowledge base of the workspace.
func checkKnowledgeBases(tx *bbolt.Tx, workspaceID string, a *data.Agent, errs *validate.Errors) {
	validate.KnowledgeBaseRefs(a.LLMConfig.KnowledgeBaseIDs, func(id string) bool {
		return knowledgeBaseInWorkspace(tx, workspaceID, id)
	}, errs)
}

// CreateAgent implements data.AgentService.
func (db *DB) CreateAgent(ctx context.Context, body map[string]json.RawMessage) (*data.Agent, error) {
	p := data.PrincipalFrom(ctx)
	var out *data.Agent
	err := db.update(func(tx *bbolt.Tx) error {
		a, errs := validate.ApplyAgentBody(data.DefaultAgent(), body, true, db.opts.Catalog)
		checkKnowledgeBases(tx, p.WorkspaceID, a, errs)
		if err := errs.Err(); err != nil {
			return err
		}
		if err := db.checkQuota(tx, p.WorkspaceID, quotaAgents); err != nil {
			return err
		}
		now := db.timeNow()
		a.ID, a.WorkspaceID, a.Status = db.ids.New(data.PrefixAgent), p.WorkspaceID, data.AgentStatusDraft
		a.CreatedAt, a.UpdatedAt, a.PublishedVersion, a.PublishedAt = now, now, nil, nil
		row := &agentRow{Agent: *a}
		if err := db.putAgentRow(tx, row, ""); err != nil {
			return err
		}
		if err := indexPut(tx.Bucket(bucketAgentsByWS), p.WorkspaceID, a.ID); err != nil {
			return err
		}
		out = masked(row)
		_, err := db.recordEvent(ctx, tx, data.EventAgentCreated, p.WorkspaceID, out)
		return err
	})
	return out, err
}

// Agent implements data.AgentService.
func (db *DB) Agent(ctx context.Context, id string) (*data.Agent, error) {
	var out *data.Agent
	err := db.view(func(tx *bbolt.Tx) error {
		e, err := db.readAgentEntry(ctx, tx, id)
		if err == nil {
			c := *e.agent // a shallow copy: the caller may set top-level fields
			out = &c
		}
		return err
	})
	return out, err
}

// UpdateAgent implements data.AgentService.
func (db *DB) UpdateAgent(ctx context.Context, id string, body map[string]json.RawMessage) (*data.Agent, error) {
	var out *data.Agent
	err := db.update(func(tx *bbolt.Tx) error {
		row, err := db.loadAgentRow(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), masked(row)); err != nil {
			return err
		}
		a, errs := validate.ApplyAgentBody(&row.Agent, body, false, db.opts.Catalog)
		if _, given := body["llm_config"]; given {
			checkKnowledgeBases(tx, row.WorkspaceID, a, errs)
		}
		if err := errs.Err(); err != nil {
			return err
		}
		if sameSnapshot(row.Snapshot(), a.Snapshot()) {
			out = masked(row) // nothing changed: no write, no event, status kept
			return nil
		}
		oldStatus := row.Status
		row.Name, row.AgentConfig = a.Name, a.AgentConfig
		row.Status, row.UpdatedAt = data.AgentStatusDraft, db.timeNow()
		if err := db.putAgentRow(tx, row, oldStatus); err != nil {
			return err
		}
		out = masked(row)
		_, err = db.recordEvent(ctx, tx, data.EventAgentUpdated, row.WorkspaceID, out)
		return err
	})
	return out, err
}

func sameSnapshot(a, b data.AgentSnapshot) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// DeleteAgent implements data.AgentService.
func (db *DB) DeleteAgent(ctx context.Context, id string) error {
	return db.update(func(tx *bbolt.Tx) error {
		row, err := db.loadAgentRow(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), masked(row)); err != nil {
			return err
		}
		if err := db.deleteAgentTx(tx, row); err != nil {
			return err
		}
		_, err = db.recordEvent(ctx, tx, data.EventAgentDeleted, row.WorkspaceID, masked(row))
		return err
	})
}

// deleteAgentTx removes an agent, its versions and its index entries, and runs the agent
// delete hooks (numbers unbound, members' agent_ids); its call history stays.
func (db *DB) deleteAgentTx(tx *bbolt.Tx, row *agentRow) error {
	versions := tx.Bucket(bucketAgentVersions)
	for _, n := range scopeIDs(versions, row.ID) {
		if err := versions.Delete(indexKey(row.ID, n)); err != nil {
			return err
		}
	}
	if err := indexDelete(tx.Bucket(bucketAgentsByWS), row.WorkspaceID, row.ID); err != nil {
		return err
	}
	if err := indexDelete(tx.Bucket(bucketAgentsByState), statusScope(row.WorkspaceID, row.Status), row.ID); err != nil {
		return err
	}
	if err := tx.Bucket(bucketAgents).Delete([]byte(row.ID)); err != nil {
		return err
	}
	for _, hook := range agentDeleteHooks {
		if err := hook(db, tx, row.WorkspaceID, row.ID); err != nil {
			return err
		}
	}
	return nil
}

// deleteWorkspaceAgents is the agents' part of deleting a workspace.
func deleteWorkspaceAgents(db *DB, tx *bbolt.Tx, workspaceID string) error {
	for _, id := range scopeIDs(tx.Bucket(bucketAgentsByWS), workspaceID) {
		var row agentRow
		found, err := getJSON(tx.Bucket(bucketAgents), []byte(id), &row)
		if err != nil {
			return err
		}
		if found {
			if err := db.deleteAgentTx(tx, &row); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeKnowledgeBaseFromAgents drops a deleted knowledge base from the knowledge_base_ids
// of the workspace's agents, in the knowledge base's delete transaction. Versions keep
// their snapshot as published.
func removeKnowledgeBaseFromAgents(db *DB, tx *bbolt.Tx, workspaceID, kbID string) error {
	b := tx.Bucket(bucketAgents)
	for _, id := range scopeIDs(tx.Bucket(bucketAgentsByWS), workspaceID) {
		var row agentRow
		found, err := getJSON(b, []byte(id), &row)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		i := slices.Index(row.LLMConfig.KnowledgeBaseIDs, kbID)
		if i < 0 {
			continue
		}
		row.LLMConfig.KnowledgeBaseIDs = slices.Delete(row.LLMConfig.KnowledgeBaseIDs, i, i+1)
		// The row is written as read: its api_key stays sealed.
		if err := putJSON(b, []byte(id), row); err != nil {
			return err
		}
	}
	return nil
}
