package service

import (
	"context"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
)

// RetentionBatch bounds the records one sweep transaction deletes: a writer waiting for
// the database waits for at most one batch, never for a whole sweep.
const RetentionBatch = 50

// day is the unit of retention_days.
const day = 24 * time.Hour

// RetentionService deletes what the workspaces' and agents' retention settings have
// expired (docs/calls.md, "Retention"). Sweep is one pass over every workspace; Run sweeps
// on an interval until stopped.
type RetentionService struct{ *base }

// retentionPolicy is a workspace's retention as one sweep reads it.
type retentionPolicy struct {
	calls     *int           // the workspace's retention_days
	knowledge *int           // knowledge_retention_days
	agents    map[string]int // agents that set their own retention_days
}

// Run sweeps at once, then every interval, until ctx is done; an error is logged and the
// next sweep tries again. It returns when ctx is done and the sweep under way has stopped
// (between two batches).
func (s *RetentionService) Run(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil && !data.LoggedByStorage(err) {
			s.log.Error("retention sweep", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Sweep queues the delete job of every deleted campaign whose recipients are not all
// deleted yet (requeueCampaignDeletes), then deletes, in every workspace, the calls
// (with the conversations that became them), finished campaigns and knowledge files its
// retention settings have expired, RetentionBatch records per transaction, and records
// one retention.swept event per workspace where it deleted something. It returns those
// events' counts by workspace id.
func (s *RetentionService) Sweep(ctx context.Context) (map[string]data.RetentionSwept, error) {
	// First, so that a workspace's failing sweep does not keep it from running: the
	// recipients of deleted campaigns whose delete job gave up are queued again. Its
	// failure is logged and keeps no workspace from its sweep.
	n, err := s.requeueCampaignDeletes(ctx)
	switch {
	case err != nil:
		if !data.LoggedByStorage(err) {
			s.log.Error("retention sweep: queueing deleted campaigns' recipients", "error", err)
		}
	case n > 0:
		s.log.Info("retention sweep: deleted campaigns' recipients left to delete", "campaigns", n)
	}
	var ids []string
	err = s.store.View(ctx, func(tx Tx) error {
		all, err := tx.AllWorkspaces()
		for _, w := range all {
			ids = append(ids, w.ID)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	out := map[string]data.RetentionSwept{}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		counts, err := s.sweepWorkspace(ctx, id)
		if err != nil {
			return out, err
		}
		if sweptAny(counts) {
			out[id] = counts
		}
	}
	return out, nil
}

func (s *RetentionService) sweepWorkspace(ctx context.Context, wsID string) (data.RetentionSwept, error) {
	var counts data.RetentionSwept
	p, err := s.policy(ctx, wsID)
	if err != nil || p == nil {
		return counts, err
	}
	now := s.now()
	// Each agent with its own retention first, then the workspace's for the other calls
	// (those of agents without one, and of deleted agents).
	for agentID, days := range p.agents {
		f := data.CallFilter{AgentID: agentID, To: now.Add(-time.Duration(days) * day)}
		if err := s.sweepCalls(ctx, wsID, f, nil, &counts); err != nil {
			return counts, err
		}
	}
	if p.calls != nil {
		f := data.CallFilter{To: now.Add(-time.Duration(*p.calls) * day)}
		if err := s.sweepCalls(ctx, wsID, f, p.agents, &counts); err != nil {
			return counts, err
		}
	}
	if p.knowledge != nil {
		if err := s.sweepFiles(ctx, wsID, now.Add(-time.Duration(*p.knowledge)*day), &counts); err != nil {
			return counts, err
		}
	}
	if p.calls != nil {
		if err := s.sweepCampaigns(ctx, wsID, &counts); err != nil {
			return counts, err
		}
	}
	if !sweptAny(counts) {
		return counts, nil
	}
	err = s.store.Update(ctx, func(tx Tx) error {
		_, err := s.recordAs(tx, data.Actor{Type: "system"}, data.EventRetentionSwept, wsID, counts)
		return err
	})
	if err == nil {
		s.log.Info("retention sweep", "workspace_id", wsID, "calls_deleted", counts.CallsDeleted,
			"knowledge_files_deleted", counts.KnowledgeFilesDeleted, "calls_on_hold", counts.CallsOnHold,
			"conversations_deleted", counts.ConversationsDeleted, "campaigns_deleted", counts.CampaignsDeleted)
	}
	return counts, err
}

// policy reads the workspace's retention and its agents' own; nil when nothing expires.
func (s *RetentionService) policy(ctx context.Context, wsID string) (*retentionPolicy, error) {
	var p *retentionPolicy
	err := s.store.View(ctx, func(tx Tx) error {
		w, err := tx.Workspace(wsID)
		if err != nil || w == nil {
			return err
		}
		p = &retentionPolicy{calls: w.Privacy.RetentionDays, knowledge: w.Privacy.KnowledgeRetentionDays, agents: map[string]int{}}
		req := data.PageRequest{PerPage: data.MaxPerPage}
		for {
			ids, page, err := tx.AgentIDs(wsID, "", nil, AgentSearch{}, req)
			if err != nil {
				return err
			}
			for _, id := range ids {
				a, err := tx.Agent(id)
				if err != nil {
					return err
				}
				if a != nil && a.Privacy.RetentionDays != nil {
					p.agents[id] = *a.Privacy.RetentionDays
				}
			}
			if page.NextCursor == nil {
				return nil
			}
			req.Cursor = *page.NextCursor
		}
	})
	if p != nil && p.calls == nil && p.knowledge == nil && len(p.agents) == 0 {
		return nil, err
	}
	return p, err
}

// sweepCalls deletes the calls f lists (created before its To), skipping those on legal
// hold and those of an agent in skip (swept under their agent's own retention). Each page
// is read in one transaction and its expired calls deleted in the next, where each is
// checked again against the settings of that moment: a hold or a longer retention set
// meanwhile keeps the call.
func (s *RetentionService) sweepCalls(ctx context.Context, wsID string, f data.CallFilter, skip map[string]int, counts *data.RetentionSwept) error {
	req := data.PageRequest{PerPage: RetentionBatch}
	for {
		var expired []string
		var next *string
		err := s.store.View(ctx, func(tx Tx) error {
			list, page, err := tx.Calls(wsID, nil, f, req)
			for _, c := range list {
				if _, own := skip[c.AgentID]; own && f.AgentID == "" {
					continue
				}
				if c.LegalHold {
					counts.CallsOnHold++
					continue
				}
				expired = append(expired, c.ID)
			}
			next = page.NextCursor
			return err
		})
		if err != nil {
			return err
		}
		if len(expired) > 0 {
			if err := s.deleteExpiredCalls(ctx, wsID, expired, counts); err != nil {
				return err
			}
		}
		if next == nil {
			return ctx.Err()
		}
		req.Cursor = *next
	}
}

// deleteExpiredCalls deletes, in one transaction, those of ids that are still expired.
func (s *RetentionService) deleteExpiredCalls(ctx context.Context, wsID string, ids []string, counts *data.RetentionSwept) error {
	deleted, held, conversations := 0, 0, 0
	err := s.store.Update(ctx, func(tx Tx) error {
		deleted, held, conversations = 0, 0, 0 // fn may run again
		w, err := tx.Workspace(wsID)
		if err != nil || w == nil {
			return err
		}
		agentDays := map[string]*int{}
		now := s.now()
		for _, id := range ids {
			c, err := tx.Call(id)
			if err != nil {
				return err
			}
			if c == nil || c.WorkspaceID != wsID {
				continue
			}
			if c.LegalHold {
				held++
				continue
			}
			days, seen := agentDays[c.AgentID]
			if !seen {
				if a, err := tx.Agent(c.AgentID); err != nil {
					return err
				} else if a != nil && a.WorkspaceID == wsID {
					days = a.Privacy.RetentionDays
				}
				agentDays[c.AgentID] = days
			}
			if days == nil {
				days = w.Privacy.RetentionDays
			}
			if days == nil || !c.CreatedAt.Before(now.Add(-time.Duration(*days)*day)) {
				continue
			}
			conv, err := deleteCall(tx, c)
			if err != nil {
				return err
			}
			deleted++
			if conv {
				conversations++
			}
		}
		return nil
	})
	if err == nil {
		counts.CallsDeleted += deleted
		counts.CallsOnHold += held
		counts.ConversationsDeleted += conversations
	}
	return err
}

// sweepFiles deletes the workspace's knowledge base files uploaded before cutoff, with their
// text, chunks and stored file, one knowledge base and at most RetentionBatch files per
// transaction. Texts and URLs are kept: they are typed or public content the team
// maintains, while uploaded files are where exports of customer data end up.
func (s *RetentionService) sweepFiles(ctx context.Context, wsID string, cutoff time.Time, counts *data.RetentionSwept) error {
	expired := map[string][]string{} // knowledge base id -> file source ids
	var kbs []string
	err := s.store.View(ctx, func(tx Tx) error {
		req := data.PageRequest{PerPage: data.MaxPerPage}
		for {
			list, page, err := tx.KnowledgeBasePage(wsID, req)
			if err != nil {
				return err
			}
			for _, kb := range list {
				for _, f := range kb.Files {
					if f.CreatedAt.Before(cutoff) {
						if expired[kb.ID] == nil {
							kbs = append(kbs, kb.ID)
						}
						expired[kb.ID] = append(expired[kb.ID], f.ID)
					}
				}
			}
			if page.NextCursor == nil {
				return nil
			}
			req.Cursor = *page.NextCursor
		}
	})
	if err != nil {
		return err
	}
	for _, kbID := range kbs {
		ids := expired[kbID]
		for len(ids) > 0 {
			n := min(len(ids), RetentionBatch)
			if err := s.deleteFiles(ctx, wsID, kbID, ids[:n], cutoff, counts); err != nil {
				return err
			}
			ids = ids[n:]
		}
	}
	return nil
}

func (s *RetentionService) deleteFiles(ctx context.Context, wsID, kbID string, ids []string, cutoff time.Time, counts *data.RetentionSwept) error {
	deleted := 0
	err := s.store.Update(ctx, func(tx Tx) error {
		deleted = 0
		kb, err := tx.KnowledgeBase(kbID)
		if err != nil || kb == nil || kb.WorkspaceID != wsID {
			return err
		}
		var gone []string
		for _, id := range ids {
			src, err := tx.KnowledgeSource(kbID, id)
			if err != nil {
				return err
			}
			if src == nil || src.Type != data.SourceFiles || !src.CreatedAt.Before(cutoff) {
				continue
			}
			if err := tx.DeleteKnowledgeSource(src); err != nil {
				return err
			}
			gone = append(gone, id)
		}
		if len(gone) == 0 {
			return nil
		}
		kb.UpdatedAt = s.timeNow()
		if err := tx.PutKnowledgeBase(kb); err != nil {
			return err
		}
		deleted = len(gone)
		tx.OnCommit(func() {
			s.kbIndexes.apply(kbID, func(ix *knowledge.Index) {
				for _, id := range gone {
					ix.Remove(id)
				}
			})
		})
		return nil
	})
	if err == nil {
		counts.KnowledgeFilesDeleted += deleted
	}
	return err
}
