package service

import (
	"context"
	"slices"
	"time"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// Dial tasks (conventions §25, docs/campaigns.md). A claim is one write transaction of
// the claimer's workspace: it returns the tasks whose leases ended, leases due
// recipients, registers each one's call as POST /calls/start registers an outbound call,
// and moves the campaigns' counts. Under bbolt's single writer and under PostgreSQL's
// workspace lock (taken before the snapshot: postgres/locks.go), two claims of one
// workspace never run at once, on any replica; a claim that did not commit handed out
// nothing, and a lease that committed holds until its call reports or it ends. So each
// attempt is dialed once. docs/architecture.md says why this claim is not a job claim.

// maxClaimLooks bounds the recipients one claim looks at per task asked for: those out
// of their window or suppressed are moved on without being handed out.
const maxClaimLooks = 4

// maxExpiredPerClaim bounds the expired leases one claim returns per campaign; the next
// claim returns the rest.
const maxExpiredPerClaim = 200

// leasedTask is one task leased in the claim's transaction, answered after it commits.
type leasedTask struct {
	task  *data.DialTask
	route *routed
	vals  map[string]any
}

// ClaimDialTasks implements data.CampaignService.
func (s *CampaignService) ClaimDialTasks(ctx context.Context, in data.DialClaim) (*data.DialClaimAnswer, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkInput(ctx, validate.DialClaim(in)); err != nil {
		return nil, err
	}
	if !mayReadConfig(p) {
		return nil, data.Errorf(data.EFORBIDDEN, "A dial task answers with the agent's configuration: it needs the right to read agents (the %s module; on a key with scopes, %s or %s).",
			data.ModuleAgents, data.ScopeCallsRuntime, data.ReadScope(data.ModuleAgents))
	}
	lease := data.DefaultDialLease
	if in.LeaseSeconds != nil {
		lease = time.Duration(*in.LeaseSeconds) * time.Second
	}
	var leased []leasedTask
	var nextDue time.Time
	err = s.store.Update(ctx, func(tx Tx) error {
		leased, nextDue = nil, time.Time{} // a write may run again: start over
		cl := &claim{s: s, tx: tx, p: p, now: s.now(), lease: lease, max: in.Max}
		if err := cl.run(ctx); err != nil {
			return err
		}
		leased, nextDue = cl.leased, cl.nextDue
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &data.DialClaimAnswer{Tasks: make([]*data.DialTask, 0, len(leased))}
	for _, l := range leased {
		run, err := s.starts.runConfig(l.route, l.vals)
		if err != nil {
			return nil, err
		}
		l.task.Agent, l.task.Variant = run, &l.route.variant
		out.Tasks = append(out.Tasks, l.task)
	}
	if !nextDue.IsZero() {
		out.NextDueAt = data.NewTime(nextDue).Ptr()
	}
	return out, nil
}

// claim is one claim's work inside its transaction.
type claim struct {
	s     *CampaignService
	tx    Tx
	p     *data.Principal
	now   time.Time
	lease time.Duration
	max   int

	open    *openCount // the workspace's open calls, counted once when a limit applies
	wsLimit int64      // -1: none
	minutes bool       // the month's call minutes are not used up: calls may open
	leased  []leasedTask
	nextDue time.Time
}

func (cl *claim) run(ctx context.Context) error {
	tx, ws := cl.tx, cl.p.WorkspaceID
	// At the month's minutes the claim leases nothing, as a call start opens nothing,
	// yet it is no error: it still gives back the leases that ran out and starts the
	// campaigns due, so the counts stay true until the limit is raised; the running
	// campaigns pause themselves, saying why (pauseIfBlocked).
	var err error
	if cl.minutes, _, err = callMinutesLeft(tx, ws, cl.now); err != nil {
		return err
	}
	if err := cl.countOpen(ctx); err != nil {
		return err
	}
	// A canceled campaign with leases out is among them until its last lease is
	// returned: expire settles them, and take never runs for a campaign not running.
	camps, err := tx.OpenCampaigns(ws)
	if err != nil {
		return err
	}
	camps = slices.DeleteFunc(camps, func(c *data.Campaign) bool { return !visibilityOf(cl.p).agent(c.AgentID) })
	// The campaign served longest ago first, so every campaign gets its turn.
	slices.SortStableFunc(camps, func(a, b *data.Campaign) int { return lastClaim(a).Compare(lastClaim(b)) })
	for _, c := range camps {
		if err := cl.expire(ctx, c.ID); err != nil {
			return err
		}
		// Reread: the expired leases moved its counts.
		c, err := tx.Campaign(c.ID)
		if err != nil {
			return err
		}
		if c.Status == data.CampaignScheduled && !cl.now.Before(c.StartAt.Time) {
			if err := cl.s.startCampaign(ctx, tx, c, cl.now); err != nil {
				return err
			}
		}
		// A campaign that cannot dial for a lasting reason pauses itself, saying why
		// (campaign_pause.go), instead of running on with nothing leased.
		if paused, err := cl.s.pauseIfBlocked(ctx, tx, c, cl.now, cl.minutes); err != nil || paused {
			if err != nil {
				return err
			}
			continue
		}
		if c.Status != data.CampaignRunning || !cl.minutes {
			continue
		}
		if err := cl.take(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func lastClaim(c *data.Campaign) time.Time {
	if c.LastClaimAt == nil {
		return time.Time{}
	}
	return c.LastClaimAt.Time
}

// countOpen counts the workspace's open calls once, when its concurrent_calls limit
// applies, ending the abandoned ones first (as checkConcurrency does); agents'
// max_concurrent_calls read the same count.
func (cl *claim) countOpen(ctx context.Context) error {
	pl, err := plan(cl.tx, cl.p.WorkspaceID)
	if err != nil {
		return err
	}
	cl.wsLimit = -1
	if l, ok := pl.Limits[data.LimitConcurrentCalls]; ok {
		cl.wsLimit = l
	}
	return cl.ensureCount(ctx)
}

// ensureCount counts the open calls if a limit applies and they are not counted yet.
func (cl *claim) ensureCount(ctx context.Context) error {
	if cl.open != nil || cl.wsLimit < 0 {
		return nil
	}
	return cl.count(ctx)
}

func (cl *claim) count(ctx context.Context) error {
	n, err := cl.s.countOpen(cl.tx, cl.p.WorkspaceID, cl.now)
	if err != nil {
		return err
	}
	for _, a := range n.abandoned {
		if err := cl.s.abandonCall(ctx, cl.tx, a, cl.now); err != nil {
			return err
		}
	}
	cl.open = n
	return nil
}

// allows reports whether one more call of agent may open now, and counts it if so.
func (cl *claim) allows(ctx context.Context, agent *data.StoredAgent) (bool, error) {
	if agent.MaxConcurrentCalls != nil && cl.open == nil {
		if err := cl.count(ctx); err != nil {
			return false, err
		}
	}
	if cl.open == nil {
		return true, nil
	}
	if cl.wsLimit >= 0 && cl.open.total >= cl.wsLimit {
		return false, nil
	}
	if m := agent.MaxConcurrentCalls; m != nil && cl.open.byAgent[agent.ID] >= int64(*m) {
		return false, nil
	}
	cl.open.total++
	cl.open.byAgent[agent.ID]++
	return true, nil
}

// expire returns the campaign's tasks whose leases ended: a call still registered was
// never reported started, so it ends failed (dial_lease_expired) and its attempt is
// given back; a started call past its deadline is abandoned (failed), an outcome like
// any other; a call gone (deleted) counts as failed.
func (cl *claim) expire(ctx context.Context, campaignID string) error {
	tx := cl.tx
	rs, err := tx.ExpiredLeases(campaignID, cl.now, maxExpiredPerClaim)
	if err != nil {
		return err
	}
	for _, r := range rs {
		var call *data.Call
		if r.CallID != nil {
			if call, err = tx.Call(*r.CallID); err != nil {
				return err
			}
		}
		switch {
		case call == nil:
			err = cl.s.endAttempt(ctx, tx, r, nil, data.OutcomeFailed, cl.now)
		case call.Status == data.CallRegistered:
			err = cl.s.endDialCall(ctx, tx, call, data.DisconnectionDialLeaseExpired, cl.now)
		case call.Status == data.CallOngoing:
			err = cl.s.endDialCall(ctx, tx, call, data.DisconnectionAbandoned, cl.now)
		default: // final, yet the task still leased: settle it by the call's end
			err = cl.s.endAttempt(ctx, tx, r, call, data.OutcomeOf(call.Status, call.DisconnectionReason), cl.now)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// take leases the campaign's due recipients, up to its free concurrency and what the
// claim still asks for; those out of their window wait for its next opening, suppressed
// ones are settled.
func (cl *claim) take(ctx context.Context, c *data.Campaign) error {
	tx := cl.tx
	w := compileWindow(c.Window)
	room := min(int64(c.MaxConcurrent)-c.Counts.InProgress, int64(cl.max-len(cl.leased)))
	looks := int(room) * maxClaimLooks
	changed := false
	for room > 0 && looks > 0 {
		due, err := tx.DueRecipients(c.ID, cl.now, int(min(room, int64(looks))))
		if err != nil {
			return err
		}
		if len(due) == 0 {
			break
		}
		looks -= len(due)
		phones := make([]string, len(due))
		for i, r := range due {
			phones[i] = r.PhoneNumber
		}
		suppressed, err := tx.SuppressedAmong(c.WorkspaceID, phones)
		if err != nil {
			return err
		}
		for _, r := range due {
			if room == 0 {
				break
			}
			next := *r
			loc := location(r.Timezone)
			switch {
			case suppressed[r.PhoneNumber]:
				next.State, next.NextAt = data.RecipientSuppressed, nil
			case !w.contains(cl.now.In(loc)):
				at := data.NewTime(w.next(cl.now, loc))
				next.NextAt = &at
			default:
				ok, err := cl.dial(ctx, c, r, &next)
				if err != nil || !ok {
					if err == nil && changed {
						err = cl.putCampaign(c)
					}
					return err // the agent or workspace is at its concurrency limit
				}
				if next.State == data.RecipientInProgress {
					room--
				}
			}
			next.UpdatedAt = data.NewTime(cl.now)
			moveCounts(c, r, &next)
			if err := tx.PutRecipient(r, &next); err != nil {
				return err
			}
			changed = true
		}
	}
	if changed {
		if err := cl.putCampaign(c); err != nil {
			return err
		}
		if err := cl.s.completeIfDone(ctx, tx, c, cl.now); err != nil {
			return err
		}
	}
	next, err := tx.NextDue(c.ID)
	if err != nil {
		return err
	}
	if !next.IsZero() && next.After(cl.now) && (cl.nextDue.IsZero() || next.Before(cl.nextDue)) {
		cl.nextDue = next
	}
	return nil
}

func (cl *claim) putCampaign(c *data.Campaign) error {
	at := data.NewTime(cl.now)
	c.UpdatedAt, c.LastClaimAt = at, &at
	return cl.tx.PutCampaign(c)
}

// dial starts r's next attempt into next: the call routed and registered as a call start
// registers it, the recipient leased. It reports false when the agent or the workspace
// is at its concurrency limit (nothing changed). A start refused for this recipient
// alone (a variable it lacks) ends the attempt failed without a call.
func (cl *claim) dial(ctx context.Context, c *data.Campaign, r *data.Recipient, next *data.Recipient) (bool, error) {
	s, tx := cl.s, cl.tx
	callID := s.ids.New(data.PrefixCall)
	attempt := r.AttemptCount + 1
	to, from := r.PhoneNumber, c.FromNumber
	in := data.CallStart{Direction: data.DirectionOutbound, ToNumber: &to, FromNumber: &from, AgentID: &c.AgentID,
		Variables: r.Variables, Metadata: map[string]any{"campaign_id": c.ID, "recipient_id": r.ID, "attempt": attempt}}
	route, err := s.starts.route(ctx, tx, cl.p, in, callID)
	switch data.ErrorCode(err) {
	case data.ENOTFOUND, data.ENOTPUBLISHED, data.ECONFLICT:
		return false, nil // the campaign's agent cannot take calls now: its turn is over
	}
	if err != nil {
		return false, err
	}
	vals := callValues(route.version, route.number, r.Variables, conversation.CallFacts{
		CallerNumber: from, CalledNumber: to, CallID: callID, Now: cl.now,
	})
	now := data.NewTime(cl.now)
	next.AttemptCount = attempt
	next.Attempts = append(slices.Clone(r.Attempts), data.RecipientAttempt{Attempt: attempt, ClaimedAt: now})
	if missing := conversation.MissingVariables(&route.version.cfg, vals); len(missing) > 0 {
		return true, s.failStart(tx, c, next, data.MissingVariables(missing).Message)
	}
	if ok, err := cl.allows(ctx, route.agent); err != nil || !ok {
		*next = *r
		return false, err
	}
	call := &data.Call{ID: callID, WorkspaceID: c.WorkspaceID, AgentID: route.agent.ID, AgentVersion: &route.variant.Version,
		Direction: data.DirectionOutbound, FromNumber: &from, ToNumber: &to, Status: data.CallRegistered,
		Variables: cloneVars(r.Variables), Metadata: in.Metadata,
		CreatedAt: data.NewTime(data.IDTime(data.PrefixCall, callID)), UpdatedAt: now}
	if route.number != nil {
		call.NumberID = &route.number.ID
	}
	if err := s.insertDialCall(ctx, tx, call, now); err != nil {
		return false, err
	}
	until := data.NewTime(cl.now.Add(cl.lease))
	next.Attempts[len(next.Attempts)-1].CallID = &callID
	next.State, next.NextAt, next.LeaseUntil, next.CallID = data.RecipientInProgress, nil, &until, &callID
	cl.leased = append(cl.leased, leasedTask{route: route, vals: vals, task: &data.DialTask{
		CampaignID: c.ID, RecipientID: r.ID, Attempt: attempt, ToNumber: to, FromNumber: from, LeaseUntil: until, Call: call,
	}})
	return true, nil
}

// insertDialCall stores a dial task's new call in the claim's transaction: collections
// made empty, the course completed, its variables redacted with the setting read in tx,
// then storeNewCall. Unlike a call start (writeRedacted), the redaction cannot run before
// the transaction: which recipients a claim leases is decided inside it. Its cost is
// bounded: a recipient's variables are bounded at import (validate), the work of each
// redaction by redact.MaxWork, and a claim's calls by validate.MaxDialClaim.
func (b *base) insertDialCall(ctx context.Context, tx Tx, c *data.Call, now data.Time) error {
	if err := completeCall(c, now); err != nil {
		return err
	}
	cfg, key, err := redactionSetting(tx, c.WorkspaceID, c.AgentID)
	if err != nil {
		return err
	}
	if key != "" {
		r, err := b.redactors.get(cfg, key)
		if err != nil {
			return err
		}
		if err := redactCall(r, c, callFields{variables: true}); err != nil {
			return err
		}
	}
	return b.storeNewCall(ctx, tx, c, nil)
}

// failStart ends an attempt that could not start (its message says why) as failed, with
// the retry rules of any failed attempt.
func (s *CampaignService) failStart(tx Tx, c *data.Campaign, r *data.Recipient, msg string) error {
	a := &r.Attempts[len(r.Attempts)-1]
	outcome := data.OutcomeFailed
	a.EndedAt, a.Outcome, a.Error = &a.ClaimedAt, &outcome, &msg
	return s.decideRecipient(tx, c, r, outcome, a.ClaimedAt.Time)
}

// cloneVars copies a variables map (the call's record must not share the recipient's).
func cloneVars(v map[string]any) map[string]any {
	out := make(map[string]any, len(v))
	for k, x := range v {
		out[k] = x
	}
	return out
}
