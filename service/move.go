package service

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/voiceapi/voiceapi/data"
)

// MoveProgress is told, as a move goes, how many records of a kind it has copied.
type MoveProgress func(kind string, copied int)

// MoveCounts are the records a move copied, by kind.
type MoveCounts map[string]int

// MoveInstallation copies every record of src into dst, which must hold no accounts yet:
// accounts, workspaces, members, tokens (their ids kept, so every issued token keeps
// working), plans, price tables, agents with their versions, rollouts, tests and test runs, knowledge bases with their sources, chunks
// and files, numbers, calls (whose rollups and minutes dst derives as it stores them),
// conversations with their messages (and the upgrade's list of those to redact), campaigns with their recipients, suppression lists,
// webhooks and their deliveries, background jobs, and each workspace's events in chain
// order with their hashes, so the audit chain verifies unchanged; only the events src had not yet fanned
// out stay in dst's outbox. Ids are kept everywhere. Kept Idempotency-Key responses are
// not copied (they expire within a day; a retry after the move runs afresh). What each
// bucket and table becomes is listed in move_storage.go.
//
// src is read in one snapshot; dst is written in transactions of bounded size.
func MoveInstallation(ctx context.Context, src, dst Store, progress MoveProgress) (MoveCounts, error) {
	m := &mover{ctx: ctx, dst: dst, counts: MoveCounts{}, progress: progress}
	marker, marks := dst.(MoveMarker)
	if marks {
		if err := marker.BeginMove(ctx); err != nil {
			return nil, err
		}
	} else if err := dst.View(ctx, func(tx Tx) error {
		n, err := tx.CountUsers()
		if err == nil && n > 0 {
			err = errors.New("the destination already holds accounts: a move goes into an empty database")
		}
		return err
	}); err != nil {
		return nil, err
	}
	err := src.View(ctx, func(tx Tx) error {
		for _, step := range []func(Tx) error{m.accounts, m.workspaces} {
			if err := step(tx); err != nil {
				return err
			}
		}
		return m.flush()
	})
	if err == nil {
		err = m.files(src)
	}
	if err == nil && marks {
		err = marker.EndMove(ctx)
	}
	return m.counts, err
}

// MoveMarker is a destination that marks itself while a move fills it (PostgreSQL: a
// server refuses to open it until the mark is cleared), since the move writes in many
// transactions and one cut short leaves a database holding part of an installation.
type MoveMarker interface {
	// BeginMove marks the destination, refusing one that holds accounts already.
	BeginMove(ctx context.Context) error
	// EndMove clears the mark once every record and file is in place.
	EndMove(ctx context.Context) error
}

// moveBatch is how many writes one destination transaction holds.
const moveBatch = 500

type mover struct {
	ctx      context.Context
	dst      Store
	counts   MoveCounts
	progress MoveProgress
	pending  []func(Tx) error
	kinds    []string
	// files are the file sources whose bytes still have to be copied.
	fileSources []*data.KnowledgeSource
}

// put queues one write of a record of kind; every moveBatch writes go in a transaction.
func (m *mover) put(kind string, write func(Tx) error) error {
	m.pending = append(m.pending, write)
	m.kinds = append(m.kinds, kind)
	if len(m.pending) >= moveBatch {
		return m.flush()
	}
	return nil
}

func (m *mover) flush() error {
	if len(m.pending) == 0 {
		return nil
	}
	writes := m.pending
	err := m.dst.Update(m.ctx, func(tx Tx) error {
		for _, w := range writes {
			if err := w(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range m.kinds {
		m.counts[k]++
		if m.progress != nil {
			m.progress(k, m.counts[k])
		}
	}
	m.pending, m.kinds = nil, nil
	return nil
}

// each pages through a newest-first list to its end.
func each[T any](page func(data.PageRequest) ([]T, data.Page, error), fn func(T) error) error {
	req := data.PageRequest{PerPage: data.MaxPerPage}
	for {
		items, meta, err := page(req)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		if meta.NextCursor == nil {
			return nil
		}
		req.Cursor = *meta.NextCursor
	}
}

// accounts copies users and their tokens.
func (m *mover) accounts(tx Tx) error {
	return each(tx.UserPage, func(u *data.UserRecord) error {
		if err := m.put("users", func(d Tx) error { return d.PutUser(u) }); err != nil {
			return err
		}
		for _, kind := range []string{data.TokenAPIKey, data.TokenLogin} {
			keys, err := tx.UserTokens(u.ID, kind)
			if err != nil {
				return err
			}
			for _, k := range keys {
				if err := m.put("tokens", func(d Tx) error { return d.PutAPIKey(k) }); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// workspaces copies each workspace with everything in it.
func (m *mover) workspaces(tx Tx) error {
	all, err := tx.AllWorkspaces()
	if err != nil {
		return err
	}
	queued, err := tx.Outbox(math.MaxInt32)
	if err != nil {
		return err
	}
	outbox := make(map[string]bool, len(queued))
	for _, id := range queued {
		outbox[id] = true
	}
	for _, w := range all {
		if err := m.put("workspaces", func(d Tx) error { return d.PutWorkspace(w) }); err != nil {
			return err
		}
		steps := []func(Tx, string) error{m.members, m.plan, m.prices, m.agents, m.knowledge, m.numbers, m.calls, m.conversations, m.campaigns, m.suppressions, m.webhooks, m.jobs}
		for _, step := range steps {
			if err := step(tx, w.ID); err != nil {
				return fmt.Errorf("workspace %s: %w", w.ID, err)
			}
		}
		if err := m.events(tx, w.ID, outbox); err != nil {
			return fmt.Errorf("workspace %s: %w", w.ID, err)
		}
	}
	return nil
}

// jobs copies the workspace's jobs as they stand: queued ones run on the destination,
// running ones (their server was stopped or died) once their leases end, finished ones
// stay readable.
func (m *mover) jobs(tx Tx, ws string) error {
	page := func(req data.PageRequest) ([]*data.JobRecord, data.Page, error) { return tx.Jobs(ws, req) }
	return each(page, func(j *data.JobRecord) error {
		return m.put("jobs", func(d Tx) error {
			_, err := d.EnqueueJob(j)
			return err
		})
	})
}

func (m *mover) members(tx Tx, ws string) error {
	members, err := tx.Members(ws)
	if err != nil {
		return err
	}
	for _, mem := range members {
		if err := m.put("members", func(d Tx) error { return d.PutMember(mem) }); err != nil {
			return err
		}
	}
	return nil
}

func (m *mover) plan(tx Tx, ws string) error {
	p, err := tx.SubscriptionPlan(ws)
	if err != nil || p == nil {
		return err
	}
	return m.put("subscription_plans", func(d Tx) error { return d.PutSubscriptionPlan(ws, p) })
}

func (m *mover) prices(tx Tx, ws string) error {
	p, err := tx.PriceTable(ws)
	if err != nil || p == nil {
		return err
	}
	return m.put("price_tables", func(d Tx) error { return d.PutPriceTable(ws, p) })
}

func (m *mover) agents(tx Tx, ws string) error {
	ids := func(req data.PageRequest) ([]string, data.Page, error) {
		return tx.AgentIDs(ws, "", nil, AgentSearch{}, req)
	}
	return each(ids, func(id string) error {
		a, err := tx.Agent(id)
		if err != nil || a == nil {
			return err
		}
		// Copied as stored, so listed for the job that seals headers stored in the clear.
		if err := m.put("agents", func(d Tx) error {
			if err := d.PutAgent(a, ""); err != nil {
				return err
			}
			return d.ListAgentToSeal(ws, id)
		}); err != nil {
			return err
		}
		if r, err := tx.Rollout(id); err != nil {
			return err
		} else if r != nil {
			if err := m.put("rollouts", func(d Tx) error { return d.PutRollout(r) }); err != nil {
				return err
			}
		}
		versions := func(req data.PageRequest) ([]*data.AgentVersion, data.Page, error) { return tx.AgentVersions(id, req) }
		if err := each(versions, func(v *data.AgentVersion) error {
			return m.put("agent_versions", func(d Tx) error { return d.PutAgentVersion(v) })
		}); err != nil {
			return err
		}
		return m.agentTests(tx, id)
	})
}

// agentTests copies an agent's tests, and its test runs with their results (a run not
// ended goes on on the destination: its job is copied with the workspace's jobs).
func (m *mover) agentTests(tx Tx, agentID string) error {
	tests, err := tx.AgentTests(agentID)
	if err != nil {
		return err
	}
	for _, t := range tests {
		if err := m.put("agent_tests", func(d Tx) error { return d.PutAgentTest(t) }); err != nil {
			return err
		}
	}
	runs := func(req data.PageRequest) ([]*data.StoredTestRun, data.Page, error) {
		return tx.TestRunPage(agentID, StateSelection{}, req)
	}
	return each(runs, func(r *data.StoredTestRun) error {
		if err := m.put("test_runs", func(d Tx) error { return d.PutTestRun(r) }); err != nil {
			return err
		}
		results, err := tx.TestResults(r.ID)
		if err != nil {
			return err
		}
		for _, res := range results {
			if err := m.put("test_results", func(d Tx) error { return d.PutTestResult(r.ID, res) }); err != nil {
				return err
			}
		}
		return nil
	})
}

func (m *mover) knowledge(tx Tx, ws string) error {
	kbs := func(req data.PageRequest) ([]*data.KnowledgeBase, data.Page, error) {
		return tx.KnowledgeBasePage(ws, req)
	}
	return each(kbs, func(kb *data.KnowledgeBase) error {
		own := *kb
		own.Texts, own.URLs, own.Files = nil, nil, nil
		if err := m.put("knowledge_bases", func(d Tx) error { return d.InsertKnowledgeBase(&own) }); err != nil {
			return err
		}
		var ids []string
		for _, s := range kb.Texts {
			ids = append(ids, s.ID)
		}
		for _, s := range kb.URLs {
			ids = append(ids, s.ID)
		}
		for _, s := range kb.Files {
			ids = append(ids, s.ID)
		}
		for _, id := range ids {
			s, err := tx.KnowledgeSource(kb.ID, id)
			if err != nil || s == nil {
				return err
			}
			if s.Type == data.SourceFiles {
				m.fileSources = append(m.fileSources, s)
			}
			if err := m.put("knowledge_sources", func(d Tx) error { return d.PutKnowledgeSource(s) }); err != nil {
				return err
			}
		}
		return tx.EachSourceChunks(kb.ID, func(sourceID string, chunks []data.SourceChunk) error {
			kept := slices.Clone(chunks)
			return m.put("knowledge_chunks", func(d Tx) error { return d.PutSourceChunks(kb.ID, sourceID, kept) })
		})
	})
}

func (m *mover) numbers(tx Tx, ws string) error {
	page := func(req data.PageRequest) ([]*data.Number, data.Page, error) {
		return tx.Numbers(ws, NumberSearch{}, req)
	}
	return each(page, func(n *data.Number) error {
		return m.put("numbers", func(d Tx) error {
			ok, err := d.InsertNumber(n)
			if err == nil && !ok {
				err = fmt.Errorf("phone number of %s is already registered in the destination", n.ID)
			}
			return err
		})
	})
}

func (m *mover) calls(tx Tx, ws string) error {
	page := func(req data.PageRequest) ([]*data.Call, data.Page, error) {
		return tx.Calls(ws, nil, data.CallFilter{}, req)
	}
	return each(page, func(c *data.Call) error {
		// Indexed where it lands: the destination keeps its own postings, and the
		// analysis values its figures count, typed by the version's fields there.
		return m.put("calls", func(d Tx) error {
			if err := d.InsertCall(c); err != nil {
				return err
			}
			if err := indexCall(d, nil, c); err != nil {
				return err
			}
			if c.Analysis == nil {
				return nil
			}
			cfg, err := callAnalysisConfig(d, c)
			if err != nil {
				return err
			}
			return storeAnalysisValues(d, c, cfg)
		})
	})
}

func (m *mover) webhooks(tx Tx, ws string) error {
	hooks, err := tx.WorkspaceWebhooks(ws)
	if err != nil {
		return err
	}
	for _, w := range hooks {
		if err := m.put("webhooks", func(d Tx) error { return d.PutWebhook(w) }); err != nil {
			return err
		}
		page := func(req data.PageRequest) ([]*data.Delivery, data.Page, error) {
			return tx.Deliveries(w.ID, DeliveryFilter{}, req)
		}
		if err := each(page, func(dl *data.Delivery) error {
			return m.put("deliveries", func(d Tx) error { return d.PutDelivery(dl) })
		}); err != nil {
			return err
		}
	}
	return nil
}

// events copies the workspace's chain oldest first, so dst links it in the same order;
// an event src had already fanned out leaves dst's outbox at once.
func (m *mover) events(tx Tx, ws string, outbox map[string]bool) error {
	return tx.ChainEvents(ws, func(id string, e *data.Event, readErr error) error {
		if readErr != nil {
			return fmt.Errorf("event %s: %w", id, readErr)
		}
		if e == nil {
			return fmt.Errorf("event %s is indexed but not stored: run `voiceapi audit verify` on the source", id)
		}
		queued := outbox[id]
		e.AgentID, e.Kind = EventAgent(e), EventKind(e) // read back without them: listed by agent and kind in dst too
		return m.put("events", func(d Tx) error {
			if err := d.AppendEvent(e); err != nil {
				return err
			}
			if queued {
				return nil
			}
			return d.RemoveFromOutbox(e.ID)
		})
	})
}

// files copies the bytes of every file source, after the rows (a destination row without
// its file is a window a crash could leave; the move is redone into an empty database).
func (m *mover) files(src Store) error {
	for _, s := range m.fileSources {
		f, err := src.OpenSourceFile(m.ctx, s.WorkspaceID, s.KnowledgeBaseID, s.ID)
		if err != nil {
			return fmt.Errorf("file of source %s: %w", s.ID, err)
		}
		err = m.dst.PutSourceFile(m.ctx, s.WorkspaceID, s.KnowledgeBaseID, s.ID, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("file of source %s: %w", s.ID, err)
		}
		m.counts["files"]++
		if m.progress != nil {
			m.progress("files", m.counts["files"])
		}
	}
	return nil
}
