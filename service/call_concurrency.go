package service

import (
	"context"
	"fmt"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// Concurrency (conventions §23): a workspace's concurrent_calls and an agent's
// max_concurrent_calls bound the calls open at once, registered or ongoing. A call left
// open past its version's max_call_duration_ms plus data.AbandonGrace no longer counts:
// the count that finds it ends it, failed with reason abandoned, in the same transaction
// (docs/runtime.md, "Concurrency"). Counting happens only where a limit applies, so a
// workspace without limits pays nothing for it.

// openCount is what counting a workspace's open calls found.
type openCount struct {
	total   int64
	byAgent map[string]int64
	// abandoned are the open calls past their deadline, with the duration bound each had.
	abandoned []abandonedCall
}

type abandonedCall struct {
	id  string
	max time.Duration
}

// countOpen counts the workspace's open calls at now, and lists those past their
// deadline without counting them.
func (b *base) countOpen(tx Tx, ws string, now time.Time) (*openCount, error) {
	open, err := tx.OpenCalls(ws)
	if err != nil {
		return nil, err
	}
	out := &openCount{byAgent: map[string]int64{}}
	drafts := map[string]time.Duration{} // agents' current bound, for calls with no version
	for _, o := range open {
		max, err := b.callBound(tx, o, drafts)
		if err != nil {
			return nil, err
		}
		if now.After(o.Since.Add(max + data.AbandonGrace)) {
			out.abandoned = append(out.abandoned, abandonedCall{o.ID, max})
			continue
		}
		out.total++
		out.byAgent[o.AgentID]++
	}
	return out, nil
}

// callBound is how long an open call may last: its version's max_call_duration_ms, or
// for a call with no version its agent's current one; the default for an agent deleted
// since (its calls stay).
func (b *base) callBound(tx Tx, o OpenCall, drafts map[string]time.Duration) (time.Duration, error) {
	const fallback = data.DefaultMaxCallDurationMS * time.Millisecond
	if o.AgentVersion != nil {
		v, err := b.versions.find(tx, o.AgentID, *o.AgentVersion)
		if err != nil || v == nil {
			return fallback, err
		}
		return v.maxDuration(), nil
	}
	if d, ok := drafts[o.AgentID]; ok {
		return d, nil
	}
	a, err := tx.Agent(o.AgentID)
	if err != nil {
		return 0, err
	}
	d := fallback
	if a != nil {
		d = time.Duration(a.CallConfig.MaxCallDurationMS) * time.Millisecond
	}
	drafts[o.AgentID] = d
	return d, nil
}

// checkConcurrency refuses one more open call of agent in ws at now with 429
// concurrency_limit when the workspace's concurrent_calls or the agent's
// max_concurrent_calls is reached. The calls it finds abandoned are ended first.
func (b *base) checkConcurrency(ctx context.Context, tx Tx, ws string, agent *data.StoredAgent, now time.Time) error {
	pl, err := plan(tx, ws)
	if err != nil {
		return err
	}
	wsLimit, wsLimited := pl.Limits[data.LimitConcurrentCalls]
	if !wsLimited && agent.MaxConcurrentCalls == nil {
		return nil
	}
	n, err := b.countOpen(tx, ws, now)
	if err != nil {
		return err
	}
	for _, a := range n.abandoned {
		if err := b.abandonCall(ctx, tx, a, now); err != nil {
			return err
		}
	}
	if wsLimited && n.total >= wsLimit {
		return data.Errorf(data.ECONCURRENCY, "The workspace has %s open, its %s limit: retry once a call has ended.", countOf(n.total, "call"), data.LimitConcurrentCalls)
	}
	if max := agent.MaxConcurrentCalls; max != nil && n.byAgent[agent.ID] >= int64(*max) {
		return data.Errorf(data.ECONCURRENCY, "The agent has %s open, its max_concurrent_calls limit: retry once one of its calls has ended.", countOf(n.byAgent[agent.ID], "call"))
	}
	return nil
}

// countOf counts n of noun in words, "1 call", "2 calls": a limit of one is common (a
// single line, a single open conversation). Every noun it is given takes a plain "s".
func countOf[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// abandonCall ends a call its runtime left open past its deadline: failed, reason
// abandoned, ended now, its duration (when it had started) at most its bound, since no
// one knows when it really ended. Its events and the rollout's figures follow as for any
// end; the system, not the caller whose count found it, is their actor.
func (b *base) abandonCall(ctx context.Context, tx Tx, a abandonedCall, now time.Time) error {
	old, err := tx.Call(a.id)
	if err != nil || old == nil || data.CallFinal(old.Status) {
		return err
	}
	next := *old
	at := data.NewTime(now)
	reason := data.DisconnectionAbandoned
	next.Status, next.DisconnectionReason, next.EndedAt, next.UpdatedAt = data.CallFailed, &reason, &at, at
	if next.StartedAt != nil {
		d := min(now.Sub(next.StartedAt.Time), a.max).Milliseconds()
		next.DurationMS = &d
	}
	if err := fillCourse(&next, at); err != nil {
		return err
	}
	if err := tx.PutCall(&next); err != nil {
		return err
	}
	sys := systemContext(ctx)
	if err := b.callEvents(sys, tx, &next, "", old.Status, false); err != nil {
		return err
	}
	return b.observeCall(sys, tx, old, &next)
}

// systemContext is ctx with no caller: events recorded with it name the system as their
// actor (work a request's transaction does on the system's behalf).
func systemContext(ctx context.Context) context.Context {
	return data.WithClientAddress(data.WithPrincipal(ctx, nil), "")
}

// openCalls counts the workspace's open calls now, as GET /subscription shows them
// (usage.concurrent_calls): abandoned calls not counted.
func (b *base) openCalls(tx Tx, ws string) (int64, error) {
	n, err := b.countOpen(tx, ws, b.now())
	if err != nil {
		return 0, err
	}
	return n.total, nil
}
