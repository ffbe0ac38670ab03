package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// RolloutService implements data.RolloutService: weighted variants of an agent's
// published versions (conventions §23, docs/agents.md "Rollouts").
type RolloutService struct{ *base }

var _ data.RolloutService = (*RolloutService)(nil)

// rolloutAgent returns the agent id of the caller's workspace when the caller may see it,
// else not found.
func rolloutAgent(tx Tx, p *data.Principal, agentID string) (*data.StoredAgent, error) {
	a, err := tx.Agent(agentID)
	if err != nil {
		return nil, err
	}
	if a == nil || a.WorkspaceID != p.WorkspaceID || !visibilityOf(p).agent(agentID) {
		return nil, data.NotFound("Agent")
	}
	return a, nil
}

// rolloutVersions returns the rollout's agent (rolloutAgent) and reports the variants'
// versions it does not have: never published, or deleted since.
func rolloutVersions(tx Tx, p *data.Principal, agentID string, in data.RolloutSet) (*data.StoredAgent, error) {
	a, err := rolloutAgent(tx, p, agentID)
	if err != nil {
		return nil, err
	}
	var errs validate.Errors
	var readErr error
	validate.VersionRefs(&errs, in, func(n int) bool {
		if n > a.LastVersion || readErr != nil {
			return readErr != nil // never published; a failed read is reported alone
		}
		v, err := tx.AgentVersion(agentID, n)
		readErr = err
		return err != nil || v != nil
	})
	if readErr != nil {
		return nil, readErr
	}
	return a, errs.Err()
}

// Rollout implements data.RolloutService.
func (s *RolloutService) Rollout(ctx context.Context, agentID string) (*data.Rollout, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	var r *data.Rollout
	err = s.store.View(ctx, func(tx Tx) error {
		if _, err := rolloutAgent(tx, p, agentID); err != nil {
			return err
		}
		stored, err := tx.Rollout(agentID)
		if err == nil && stored == nil {
			err = data.NotFound("Rollout")
		}
		if err == nil {
			r = &stored.Rollout
		}
		return err
	})
	return r, err
}

// SetRollout implements data.RolloutService. A rollout that stands keeps its start, so
// its callers keep their slots (slotOf), its slot map moved as little as the new weights
// allow (reslot), and the figures of the versions it keeps; rolled_back marks are
// cleared, since the weights are the caller's choice again. A new rollout lays its slots
// out consecutively.
func (s *RolloutService) SetRollout(ctx context.Context, agentID string, in data.RolloutSet) (*data.Rollout, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	refs := func(tx Tx) error {
		_, err := rolloutVersions(tx, p, agentID, in)
		return err
	}
	check := s.checkInputAndRefs
	if len(in.Variants) <= validate.MaxRolloutVariants {
		// The weights' sum is told at variants but refuses no variant: each one's version
		// is checked with it, so a body is told both at once (conventions §2).
		check = func(ctx context.Context, rules error, refs func(Tx) error) error {
			return s.checkInputAndRefsBeside(ctx, rules, refs, "variants")
		}
	}
	if err := check(ctx, validate.Rollout(in), refs); err != nil {
		return nil, err
	}
	var r *data.StoredRollout
	err = s.store.Update(ctx, func(tx Tx) error {
		a, err := rolloutVersions(tx, p, agentID, in)
		if err != nil {
			return err
		}
		old, err := tx.Rollout(agentID)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), shownRollout(old)); err != nil {
			return err
		}
		now := s.timeNow()
		r = &data.StoredRollout{Rollout: data.Rollout{AgentID: agentID, WorkspaceID: a.WorkspaceID, Rollback: in.Rollback, StartedAt: now, UpdatedAt: now}}
		if old != nil {
			r.StartedAt = old.StartedAt
		}
		for _, v := range in.Variants {
			nv := data.RolloutVariant{Version: v.Version, Weight: v.Weight}
			if old != nil {
				if i := variantIndex(&old.Rollout, v.Version); i >= 0 {
					nv.RolloutFigures = old.Variants[i].RolloutFigures
				}
			}
			r.Variants = append(r.Variants, nv)
		}
		r.Slots = nextSlots(old, r.Variants)
		// The same weights keep every slot, so an unchanged record is an unchanged map.
		if old != nil && unchangedRollout(&old.Rollout, &r.Rollout) {
			r = old
			return errNothingToWrite // nothing changed: no write, no event (unchanged.go)
		}
		if err := tx.PutRollout(r); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventRolloutUpdated, a.WorkspaceID, &r.Rollout)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &r.Rollout, nil
}

// shownRollout is the record clients see of r (nil when none stands): what an ETag is of.
func shownRollout(r *data.StoredRollout) *data.Rollout {
	if r == nil {
		return nil
	}
	return &r.Rollout
}

// unchangedRollout reports whether next, the rollout a PUT builds over old, holds what
// old holds: the same variants, weights, figures and rollback, none rolled back.
func unchangedRollout(old, next *data.Rollout) bool {
	stamped := next.UpdatedAt
	next.UpdatedAt = old.UpdatedAt
	same := unchangedSince(storedSnapshot(old), next)
	next.UpdatedAt = stamped
	return same
}

// EndRollout implements data.RolloutService.
func (s *RolloutService) EndRollout(ctx context.Context, agentID string) error {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx Tx) error {
		if _, err := rolloutAgent(tx, p, agentID); err != nil {
			return err
		}
		cur, err := tx.Rollout(agentID)
		if err != nil {
			return err
		}
		if cur == nil {
			return data.NotFound("Rollout")
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), shownRollout(cur)); err != nil {
			return err
		}
		ended, err := s.endRollout(ctx, tx, agentID)
		if err == nil && !ended {
			err = data.NotFound("Rollout")
		}
		return err
	})
}

// endRollout ends the agent's rollout if one stands, telling it as agent.rollout_ended:
// DELETE, and a publish or restore (which choose what is live).
func (b *base) endRollout(ctx context.Context, tx Tx, agentID string) (bool, error) {
	r, err := tx.Rollout(agentID)
	if err != nil || r == nil {
		return false, err
	}
	if err := tx.DeleteRollout(agentID); err != nil {
		return false, err
	}
	_, err = b.record(ctx, tx, data.EventRolloutEnded, r.WorkspaceID, &r.Rollout)
	return true, err
}
