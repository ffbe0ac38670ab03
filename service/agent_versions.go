package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// DeleteAgent implements data.AgentService: the agent and its versions go, numbers bound
// to it are unbound and members' agent_ids drop it (storage cascades), its open campaigns
// are canceled; its calls, conversations and campaigns stay, and what the
// Idempotency-Keys of the requests that acted on it kept is cut to its claims
// (cutKeptAnswersOfDeleted).
func (s *AgentService) DeleteAgent(ctx context.Context, id string) error {
	return s.store.Update(ctx, func(tx Tx) error {
		stored, plain, err := s.load(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), masked(plain)); err != nil {
			return err
		}
		if err := s.unbindNumbers(ctx, tx, plain.WorkspaceID, id); err != nil {
			return err
		}
		if err := s.cancelAgentCampaigns(ctx, tx, plain.WorkspaceID, id); err != nil {
			return err
		}
		if err := tx.DeleteAgent(stored); err != nil {
			return err
		}
		if err := s.cutKeptAnswersOfDeleted(tx, plain.WorkspaceID, id); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventAgentDeleted, plain.WorkspaceID, masked(plain))
		return err
	})
}

// unbindNumbers clears a deleted agent from the numbers bound to it, telling each change
// as number.updated, in the agent's delete transaction.
func (s *AgentService) unbindNumbers(ctx context.Context, tx Tx, ws, agentID string) error {
	var bound []*data.Number
	req := data.PageRequest{PerPage: 100}
	for {
		page, meta, err := tx.Numbers(ws, NumberSearch{NumberFilter: data.NumberFilter{AgentID: agentID}}, req)
		if err != nil {
			return err
		}
		bound = append(bound, page...)
		if meta.NextCursor == nil {
			break
		}
		req.Cursor = *meta.NextCursor
	}
	for _, n := range bound {
		if n.InboundAgentID != nil && *n.InboundAgentID == agentID {
			n.InboundAgentID = nil
		}
		if n.OutboundAgentID != nil && *n.OutboundAgentID == agentID {
			n.OutboundAgentID = nil
		}
		n.UpdatedAt = s.timeNow()
		if err := tx.PutNumber(n); err != nil {
			return err
		}
		if _, err := s.record(ctx, tx, data.EventNumberUpdated, ws, n); err != nil {
			return err
		}
	}
	return nil
}

// PublishAgent implements data.AgentService: version N+1 snapshots name and every group,
// once the publish gate lets the draft through (service/publish_gate.go), N the last
// number given (deleted versions included: a number is never given twice). It is the one
// place a version is made (apply --publish and the console publish through it), within
// validate.MaxVersionsPerAgent.
func (s *AgentService) PublishAgent(ctx context.Context, id string, in data.PublishRequest) error {
	description := in.Description
	var errs validate.Errors
	validate.ValidatePublish(description, &errs)
	if err := checkInput(ctx, errs.Err()); err != nil {
		return err
	}
	p := data.PrincipalFrom(ctx)
	return s.store.Update(ctx, func(tx Tx) error {
		stored, plain, err := s.load(ctx, tx, id)
		if err != nil {
			return err
		}
		current := masked(plain)
		if err := data.CheckIfMatch(data.IfMatch(ctx), current); err != nil {
			return err
		}
		if err := checkVersionBound(tx, id); err != nil {
			return err
		}
		keys, err := s.draftKeysOf(plain)
		if err != nil {
			return err
		}
		gate, err := publishGate(tx, id, keys)
		if err != nil {
			return err
		}
		untested := gate.State != data.GateOpen
		switch {
		case untested && !in.Force:
			return gateError(gate)
		case untested && !data.RoleAtLeast(p.Role, data.RoleAdmin):
			return data.Errorf(data.EFORBIDDEN, "Only owners and admins may publish past the agent's required tests (force).")
		}
		now := s.timeNow()
		n := stored.LastVersion + 1
		// The version keeps the key as stored: sealed.
		v := &data.AgentVersion{
			AgentID: id, VersionNumber: n, Description: description, Name: stored.Name,
			AgentConfig: stored.AgentConfig, CreatedAt: now, PublishedBy: p.UserID,
		}
		if err := tx.PutAgentVersion(v); err != nil {
			return err
		}
		oldStatus := stored.Status
		next := *stored
		next.LastVersion, next.Status, next.PublishedVersion = n, data.AgentStatusPublished, &n
		next.PublishedAt, next.UpdatedAt = &now, now
		if err := tx.PutAgent(&next, oldStatus); err != nil {
			return err
		}
		out := next
		out.AgentConfig = plain.AgentConfig
		if _, err = s.record(ctx, tx, data.EventAgentPublished, out.WorkspaceID, masked(&out)); err != nil {
			return err
		}
		// What is published is live: a rollout ends.
		if _, err = s.endRollout(ctx, tx, id); err != nil || !untested {
			return err
		}
		_, err = s.record(ctx, tx, data.EventAgentPublishedUntested, out.WorkspaceID, publishedUntested{PublishGate: *gate, Version: n})
		return err
	})
}

// publishedUntested is agent.published_untested's data: the version a forced publish made
// and the gate it went past.
type publishedUntested struct {
	data.PublishGate
	Version int `json:"version"`
}

// loadVersion reads version n of a visible agent, api_key opened.
func (s *AgentService) loadVersion(ctx context.Context, tx Tx, agentID string, n int) (*data.AgentVersion, error) {
	row, err := tx.Agent(agentID)
	if err != nil {
		return nil, err
	}
	if err := visible(ctx, agentID, row); err != nil {
		return nil, err
	}
	v, err := tx.AgentVersion(agentID, n)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, data.NotFound("Agent version")
	}
	if v.AgentConfig, err = s.open(v.AgentConfig); err != nil {
		return nil, err
	}
	return v, nil
}

// ListAgentVersions implements data.AgentService.
func (s *AgentService) ListAgentVersions(ctx context.Context, agentID string, req data.PageRequest) ([]*data.AgentVersion, data.Page, error) {
	var list []*data.AgentVersion
	var page data.Page
	err := s.store.View(ctx, func(tx Tx) error {
		row, err := tx.Agent(agentID)
		if err != nil {
			return err
		}
		if err := visible(ctx, agentID, row); err != nil {
			return err
		}
		versions, pg, err := tx.AgentVersions(agentID, req)
		if err != nil {
			return err
		}
		page = pg
		list = make([]*data.AgentVersion, 0, len(versions))
		for _, v := range versions {
			if v.AgentConfig, err = s.open(v.AgentConfig); err != nil {
				return err
			}
			m := v.Masked()
			list = append(list, &m)
		}
		return nil
	})
	return list, page, err
}

// AgentVersion implements data.AgentService.
func (s *AgentService) AgentVersion(ctx context.Context, agentID string, n int) (*data.AgentVersion, error) {
	var out *data.AgentVersion
	err := s.store.View(ctx, func(tx Tx) error {
		v, err := s.loadVersion(ctx, tx, agentID, n)
		if err == nil {
			m := v.Masked()
			out = &m
		}
		return err
	})
	return out, err
}

// RestoreAgentVersion implements data.AgentService: the version's snapshot becomes the
// live configuration, published, without creating a version.
func (s *AgentService) RestoreAgentVersion(ctx context.Context, agentID string, n int) (*data.Agent, error) {
	var out *data.Agent
	err := s.store.Update(ctx, func(tx Tx) error {
		stored, plain, err := s.load(ctx, tx, agentID)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), masked(plain)); err != nil {
			return err
		}
		v, err := tx.AgentVersion(agentID, n)
		if err != nil {
			return err
		}
		if v == nil {
			return data.NotFound("Agent version")
		}
		now := s.timeNow()
		next := *stored
		next.Name, next.AgentConfig = v.Name, v.AgentConfig // the version's key, sealed as stored
		next.Status, next.PublishedVersion, next.PublishedAt, next.UpdatedAt = data.AgentStatusPublished, &n, &now, now
		// Knowledge bases deleted since the version was published stay out.
		kept := make([]string, 0, len(v.LLMConfig.KnowledgeBaseIDs))
		for _, id := range v.LLMConfig.KnowledgeBaseIDs {
			ok, err := tx.KnowledgeBaseExists(next.WorkspaceID, id)
			if err != nil {
				return err
			}
			if ok {
				kept = append(kept, id)
			}
		}
		next.LLMConfig.KnowledgeBaseIDs = kept
		if err := tx.PutAgent(&next, stored.Status); err != nil {
			return err
		}
		shown := next
		if shown.AgentConfig, err = s.open(next.AgentConfig); err != nil {
			return err
		}
		out = masked(&shown)
		if _, err = s.record(ctx, tx, data.EventAgentRestored, next.WorkspaceID, out); err != nil {
			return err
		}
		_, err = s.endRollout(ctx, tx, agentID) // what is restored is live: a rollout ends
		return err
	})
	return out, err
}

// DiffAgentVersions implements data.AgentService; credentials are masked by the diff.
func (s *AgentService) DiffAgentVersions(ctx context.Context, agentID string, a int, b *int) ([]data.Change, error) {
	var changes []data.Change
	err := s.store.View(ctx, func(tx Tx) error {
		from, err := s.loadVersion(ctx, tx, agentID, a)
		if err != nil {
			return err
		}
		var to data.AgentSnapshot
		if b == nil {
			_, plain, err := s.load(ctx, tx, agentID)
			if err != nil {
				return err
			}
			to = plain.Snapshot()
		} else {
			v, err := s.loadVersion(ctx, tx, agentID, *b)
			if err != nil {
				return err
			}
			to = v.Snapshot()
		}
		changes = data.DiffAgentConfig(from.Snapshot(), to)
		return nil
	})
	return changes, err
}
