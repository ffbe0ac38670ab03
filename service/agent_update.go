package service

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// UpdateAgent implements data.AgentService: the given groups merge into the stored ones
// (data.AgentUpdate.Apply); a change makes the agent a draft, no change writes nothing.
//
// The work of an update (opening the stored key, merging, validating, sealing, encoding
// the response and its event) is done outside any transaction, against the stored row
// read first. Writers run their transaction functions one after another inside a shared
// commit, so work done there is done on one core while the other writers wait, and a 422
// found there would make the storage run the whole batch again. The write transaction
// then only checks that the row's revision is still the one the update was computed
// from, checks the knowledge base references, and stores the result. If another write
// changed the row meanwhile, the update is computed again inside the transaction.
func (s *AgentService) UpdateAgent(ctx context.Context, id string, in data.AgentUpdate) (*data.Agent, error) {
	out, _, err := s.UpdateAgentJSON(ctx, id, in)
	return out, err
}

// UpdateAgentJSON is UpdateAgent with the agent's JSON as the response sends it: the
// bytes stored, recorded in the agent.updated event and hashed for the ETag, encoded once.
func (s *AgentService) UpdateAgentJSON(ctx context.Context, id string, in data.AgentUpdate) (*data.Agent, json.RawMessage, error) {
	before, rev, err := s.readForUpdate(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	prep, err := s.prepareUpdate(ctx, id, before, &in)
	if err != nil {
		return nil, nil, err
	}
	if prep.faults.Len() > 0 {
		return nil, nil, s.updateFaults(ctx, prep, &in)
	}
	if prep.unchanged {
		return prep.out, prep.outJSON, nil // nothing changed: no write, no event, status kept
	}
	var done *agentUpdate
	var storedRev uint64
	err = s.store.Update(ctx, func(tx Tx) error {
		var err error
		done, storedRev, err = s.storeUpdate(ctx, tx, id, rev, prep, &in)
		if err == nil && done.unchanged {
			return errNothingToWrite // a concurrent write made it a no-op: commit nothing
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var stored *data.StoredAgent // nil when a concurrent write made the update a no-op
	if !done.unchanged {
		stored = done.stored
	}
	s.rows.put(id, storedRev, stored) // committed: the next update merges into it
	return done.out, done.outJSON, nil
}

// readForUpdate returns the stored row an update is computed against and its revision,
// from the row cache when it holds that revision; a missing agent is a nil row.
func (s *AgentService) readForUpdate(ctx context.Context, id string) (*data.StoredAgent, uint64, error) {
	var before *data.StoredAgent
	var rev uint64
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		if rev, err = tx.AgentRevision(id); err != nil || rev == 0 {
			return err
		}
		if row, ok := s.rows.get(id, rev); ok {
			before = row
			return nil
		}
		before, err = tx.Agent(id)
		return err
	})
	return before, rev, err
}

// updateFaults is the error of a faulty update: every fault at once, the references too.
func (s *AgentService) updateFaults(ctx context.Context, prep *agentUpdate, in *data.AgentUpdate) error {
	errs := prep.faults
	if in.LLMConfig.Set {
		if err := s.store.View(ctx, func(tx Tx) error {
			var err error
			errs, err = withReferences(tx, prep.row.WorkspaceID, prep.merged, prep.faults)
			return err
		}); err != nil {
			return err
		}
	}
	return errs.Err()
}

// storeUpdate is the write transaction of an update prepared against revision rev: it
// computes the update again if the row changed since, checks the knowledge base
// references, and stores the row, its revision and the agent.updated event. The update
// it returns is the one stored (unchanged if the row already matched).
func (s *AgentService) storeUpdate(ctx context.Context, tx Tx, id string, rev uint64, p *agentUpdate, in *data.AgentUpdate) (*agentUpdate, uint64, error) {
	cur, err := tx.AgentRevision(id)
	if err != nil {
		return nil, 0, err
	}
	if cur != rev { // changed since: compute again, here
		row, err := tx.Agent(id)
		if err != nil {
			return nil, 0, err
		}
		if p, err = s.prepareUpdate(ctx, id, row, in); err != nil {
			return nil, 0, err
		}
	}
	if in.LLMConfig.Set {
		// Knowledge bases live in other rows: check them in this transaction.
		errs, err := withReferences(tx, p.row.WorkspaceID, p.merged, p.faults)
		if err != nil {
			return nil, 0, err
		}
		if err := errs.Err(); err != nil {
			return nil, 0, err
		}
	} else if err := p.faults.Err(); err != nil {
		return nil, 0, err
	}
	if p.unchanged {
		return p, 0, nil
	}
	if err := tx.PutAgent(p.stored, p.oldStatus); err != nil {
		return nil, 0, err
	}
	storedRev, err := storedRevision(tx, id)
	if err != nil {
		return nil, 0, err
	}
	_, err = s.record(ctx, tx, data.EventAgentUpdated, p.row.WorkspaceID, p.outJSON)
	return p, storedRev, err
}

// agentUpdate is an update computed against one revision of the stored row.
type agentUpdate struct {
	row       *data.StoredAgent // the new row, api_key plain (the stored one while faulty)
	merged    *data.Agent       // the body applied, for the reference checks
	faults    *validate.Errors  // every fault but the references'
	oldStatus string
	unchanged bool              // the body changes nothing
	out       *data.Agent       // the response: the new row, masked
	stored    *data.StoredAgent // the new row as stored (api_key sealed)
	outJSON   json.RawMessage   // out encoded: the response, the event, the stored row
}

// prepareUpdate applies in to row, the agent as stored, and checks every rule but the
// references to other records; faults come back in the result (err is for anything else).
func (s *AgentService) prepareUpdate(ctx context.Context, id string, row *data.StoredAgent, in *data.AgentUpdate) (*agentUpdate, error) {
	sealedRow, plain, err := s.opened(ctx, id, row)
	if err != nil {
		return nil, err
	}
	if err := data.CheckIfMatch(data.IfMatch(ctx), masked(plain)); err != nil {
		return nil, err
	}
	a := in.Apply(&plain.Agent)
	u := &agentUpdate{row: plain, merged: a, oldStatus: plain.Status, faults: s.checkAgent(ctx, a, in, false)}
	validate.KeptCredentialMoved(u.faults, "llm_config.api_key", keptAPIKey(plain.LLMConfig, a.LLMConfig, in),
		llmAddress(plain.LLMConfig), llmAddress(a.LLMConfig))
	keptHeadersMoved(u.faults, plain.LLMConfig.Tools, a.LLMConfig.Tools, in)
	if u.faults.Len() > 0 {
		return u, nil
	}
	sameConfig := sameSnapshot(plain.Snapshot(), a.Snapshot())
	samePolicy := reflect.DeepEqual(plain.Privacy.Normalized(), a.Privacy.Normalized()) &&
		reflect.DeepEqual(plain.MaxConcurrentCalls, a.MaxConcurrentCalls)
	if sameConfig && samePolicy {
		u.unchanged, u.out = true, masked(plain)
		if u.outJSON, err = u.out.AppendJSON(nil); err != nil {
			return nil, err
		}
		return u, nil
	}
	next := *plain
	next.Privacy, next.MaxConcurrentCalls, next.UpdatedAt = a.Privacy, a.MaxConcurrentCalls, s.timeNow()
	if !sameConfig {
		// Privacy and max_concurrent_calls are policy, no part of a version: changing
		// them alone leaves the agent published (docs/calls.md, docs/agents.md).
		next.Name, next.AgentConfig = a.Name, a.AgentConfig
		next.Status = data.AgentStatusDraft
	}
	u.row, u.out = &next, masked(&next)
	stored := next
	if plain.LLMConfig.APIKey == next.LLMConfig.APIKey {
		stored.LLMConfig.APIKey = sealedRow.LLMConfig.APIKey // the same key: no sealing again
		if stored.AgentConfig, err = s.sealedHeaders(stored.AgentConfig); err != nil {
			return nil, err
		}
	} else if stored.AgentConfig, err = s.sealed(next.AgentConfig); err != nil {
		return nil, err
	}
	if u.outJSON, err = u.out.AppendJSON(make([]byte, 0, 8192)); err != nil {
		return nil, err
	}
	stored.JSON = rowJSON(stored.AgentConfig, u.outJSON) // storage may keep these bytes (data.StoredAgent)
	u.stored = &stored
	return u, nil
}

// keptAPIKey reports whether an update keeps the stored api_key without giving it: sent
// back masked, or not sent.
func keptAPIKey(before, after data.LLMConfig, in *data.AgentUpdate) bool {
	if before.APIKey == nil || after.APIKey == nil || *before.APIKey != *after.APIKey {
		return false
	}
	given := in.LLMConfig.Set && in.LLMConfig.V.APIKey.Set && in.LLMConfig.V.APIKey.V != nil
	return !given || data.IsMasked(*in.LLMConfig.V.APIKey.V)
}

// llmAddress is where a model's requests go (validate.ProviderAddress).
func llmAddress(c data.LLMConfig) string {
	return validate.ProviderAddress(c.Provider, c.Region, c.BaseURL, c.Endpoint)
}

// keptHeadersMoved adds the fault of each credential header kept by its mask
// (data.KeepMaskedHeaders) in a tool whose api_endpoint moved to another origin: the
// stored value is sent only where it was entered (validate.KeptCredentialMoved).
func keptHeadersMoved(errs *validate.Errors, before, after []*data.Tool, in *data.AgentUpdate) {
	if !in.LLMConfig.Set || !in.LLMConfig.V.Tools.Set {
		return
	}
	given := in.LLMConfig.V.Tools.V
	for i, t := range after {
		if t == nil || i >= len(given) || given[i] == nil {
			continue
		}
		var old *data.Tool
		for _, b := range before {
			if b != nil && b.Name == t.Name {
				old = b
			}
		}
		if old == nil {
			continue
		}
		for j, item := range t.CustomFunctionHeaders {
			kept := j < len(given[i].CustomFunctionHeaders) && data.IsMaskedHeader(given[i].CustomFunctionHeaders[j]) && !data.IsMaskedHeader(item)
			path := validate.Index(validate.Index("llm_config.tools", i)+".custom_function_headers", j)
			validate.KeptCredentialMoved(errs, path, kept, validate.ProviderAddress("", "", old.APIEndpoint), validate.ProviderAddress("", "", t.APIEndpoint))
		}
	}
}
