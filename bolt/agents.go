package bolt

import (
	"bytes"
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
	return db.decodeAgentRow(ctx, id, tx.Bucket(bucketAgents).Get([]byte(id)))
}

// decodeAgentRow is loadAgentRow on the stored bytes raw (nil when there are none).
func (db *DB) decodeAgentRow(ctx context.Context, id string, raw []byte) (*agentRow, error) {
	p := data.PrincipalFrom(ctx)
	var row agentRow
	if raw != nil {
		if err := jsonUnmarshal(raw, &row); err != nil {
			return nil, fmt.Errorf("decoding agent %s: %w", id, err)
		}
	}
	if raw == nil || row.WorkspaceID != p.WorkspaceID || !p.CanSeeAgent(id) {
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
	raw, err := db.encodeAgentRow(row)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketAgents).Put([]byte(row.ID), raw); err != nil {
		return err
	}
	return moveAgentStatus(tx, &row.Agent, oldStatus)
}

// encodeAgentRow returns row as stored: api_key sealed.
func (db *DB) encodeAgentRow(row *agentRow) ([]byte, error) {
	stored := *row
	cfg, err := db.sealedConfig(row.AgentConfig)
	if err != nil {
		return nil, err
	}
	stored.AgentConfig = cfg
	raw, err := json.Marshal(stored)
	if err != nil {
		return nil, fmt.Errorf("encoding agent %s: %w", row.ID, err)
	}
	return raw, nil
}

// moveAgentStatus moves a's entry in the status index from oldStatus ("" for a new agent).
func moveAgentStatus(tx *bbolt.Tx, a *data.Agent, oldStatus string) error {
	if oldStatus == a.Status {
		return nil
	}
	idx := tx.Bucket(bucketAgentsByState)
	if oldStatus != "" {
		if err := indexDelete(idx, statusScope(a.WorkspaceID, oldStatus), a.ID); err != nil {
			return err
		}
	}
	return indexPut(idx, statusScope(a.WorkspaceID, a.Status), a.ID)
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
//
// The work of an update (decoding the stored row and the body, validating, merging,
// encoding the row and its event) is done outside any transaction, on a copy of the row.
// Writers run their transaction functions one after another inside a shared commit
// (group commit, see update), so work done there is done on one core while the other
// writers wait, and a 422 found there would make bbolt run the whole batch again; a read
// transaction held during that work would keep bbolt from reusing freed pages. The write
// transaction then only checks that the row is still byte for byte the one the update
// was computed from, checks the knowledge base references, and stores the result. If
// another write changed the row meanwhile, the update is computed again inside the
// transaction, as it always was.
func (db *DB) UpdateAgent(ctx context.Context, id string, body map[string]json.RawMessage) (*data.Agent, error) {
	_, givesLLM := body["llm_config"]
	var before []byte
	if err := db.view(func(tx *bbolt.Tx) error {
		before = bytes.Clone(tx.Bucket(bucketAgents).Get([]byte(id)))
		return nil
	}); err != nil {
		return nil, err
	}
	prep, errs, err := db.prepareAgentUpdate(ctx, id, before, body)
	if err != nil {
		return nil, err
	}
	if errs.Len() > 0 {
		// Report every fault at once: the references too.
		if givesLLM {
			if err := db.view(func(tx *bbolt.Tx) error {
				checkKnowledgeBases(tx, prep.row.WorkspaceID, prep.merged, errs)
				return nil
			}); err != nil {
				return nil, err
			}
		}
		return nil, errs.Err()
	}
	if prep.unchanged {
		return prep.out, nil // nothing changed: no write, no event, status kept
	}
	var out *data.Agent
	err = db.update(func(tx *bbolt.Tx) error {
		p := prep
		if raw := tx.Bucket(bucketAgents).Get([]byte(id)); !bytes.Equal(raw, before) {
			var errs *validate.Errors
			var err error // changed since: compute again, here
			if p, errs, err = db.prepareAgentUpdate(ctx, id, raw, body); err != nil {
				return err
			}
			if givesLLM {
				checkKnowledgeBases(tx, p.row.WorkspaceID, p.merged, errs)
			}
			if err := errs.Err(); err != nil {
				return err
			}
			if p.unchanged {
				out = p.out
				return nil
			}
		} else if givesLLM {
			// Knowledge bases live in other rows: check them in this transaction.
			var errs validate.Errors
			checkKnowledgeBases(tx, p.row.WorkspaceID, p.merged, &errs)
			if err := errs.Err(); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketAgents).Put([]byte(id), p.stored); err != nil {
			return err
		}
		if err := moveAgentStatus(tx, &p.row.Agent, p.oldStatus); err != nil {
			return err
		}
		out = p.out
		_, err := db.recordEvent(ctx, tx, data.EventAgentUpdated, p.row.WorkspaceID, p.outJSON)
		return err
	})
	return out, err
}

// agentUpdate is an update computed against one version of the stored row.
type agentUpdate struct {
	row       *agentRow   // the new row, api_key plain (the stored one while faulty)
	merged    *data.Agent // the body applied, for the reference checks
	oldStatus string
	unchanged bool        // the body changes nothing
	out       *data.Agent // the response: the new row, masked
	stored    []byte      // the new row as stored (api_key sealed)
	outJSON   json.RawMessage
}

// prepareAgentUpdate applies body to the stored row raw and checks every rule but the
// references to other records; faults come back in errs (err is for anything else).
func (db *DB) prepareAgentUpdate(ctx context.Context, id string, raw []byte, body map[string]json.RawMessage) (*agentUpdate, *validate.Errors, error) {
	row, err := db.decodeAgentRow(ctx, id, raw)
	if err != nil {
		return nil, nil, err
	}
	if err := data.CheckIfMatch(data.IfMatch(ctx), masked(row)); err != nil {
		return nil, nil, err
	}
	a, errs := validate.ApplyAgentBody(&row.Agent, body, false, db.opts.Catalog)
	u := &agentUpdate{row: row, merged: a, oldStatus: row.Status}
	if errs.Len() > 0 {
		return u, errs, nil
	}
	if sameSnapshot(row.Snapshot(), a.Snapshot()) {
		u.unchanged, u.out = true, masked(row)
		return u, errs, nil
	}
	row.Name, row.AgentConfig = a.Name, a.AgentConfig
	row.Status, row.UpdatedAt = data.AgentStatusDraft, db.timeNow()
	u.out = masked(row)
	if u.stored, err = db.encodeAgentRow(row); err != nil {
		return nil, nil, err
	}
	if u.outJSON, err = json.Marshal(u.out); err != nil {
		return nil, nil, err
	}
	return u, errs, nil
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
