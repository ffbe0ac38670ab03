package service

import (
	"context"
	"slices"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// A dial task's call decides its attempt (conventions §25): when the call reports
// ongoing, the task's lease runs to the call's own deadline; when it ends, its status
// and disconnection_reason give the outcome (data.OutcomeOf), and the outcome completes
// the recipient, retries it after the backoff, or exhausts it. Every channel that moves
// a call's status reaches observeCall in the transaction that moves it: PUT /calls, an
// abandoned call ended by a concurrency count, a lease that expired.

// observeCall tells the call's agent's rollout and its campaign about a change of call.
func (b *base) observeCall(ctx context.Context, tx Tx, old, next *data.Call) error {
	if err := b.observeRollout(ctx, tx, old, next); err != nil {
		return err
	}
	return b.observeCampaign(ctx, tx, old, next)
}

// observeCampaign applies a dial task's call's change of status to its recipient, now.
func (b *base) observeCampaign(ctx context.Context, tx Tx, old, next *data.Call) error {
	return b.observeCampaignAt(ctx, tx, old, next, b.now())
}

// observeCampaignAt is observeCampaign at a given time: a claim that ends a call judges
// it at the claim's own now, so the attempt it gives back is due within that claim.
func (b *base) observeCampaignAt(ctx context.Context, tx Tx, old, next *data.Call, now time.Time) error {
	if next.Direction != data.DirectionOutbound || old == nil || old.Status == next.Status {
		return nil
	}
	if next.Status != data.CallOngoing && !data.CallFinal(next.Status) {
		return nil
	}
	r, err := tx.RecipientByCall(next.ID)
	if err != nil || r == nil {
		return err
	}
	if next.Status == data.CallOngoing {
		return b.extendDialLease(tx, r, next, now)
	}
	if next.Status == data.CallFailed && next.DisconnectionReason != nil &&
		*next.DisconnectionReason == data.DisconnectionDialLeaseExpired && old.Status == data.CallRegistered {
		return b.endAttempt(ctx, tx, r, next, data.OutcomeLeaseExpired, now)
	}
	return b.endAttempt(ctx, tx, r, next, data.OutcomeOf(next.Status, next.DisconnectionReason), now)
}

// extendDialLease keeps a started call's task leased until the call's deadline: its
// version's max_call_duration_ms from its start, and the grace an abandoned call gets.
func (b *base) extendDialLease(tx Tx, r *data.Recipient, call *data.Call, now time.Time) error {
	bound := time.Duration(data.DefaultMaxCallDurationMS) * time.Millisecond
	if call.AgentVersion != nil {
		v, err := b.versions.find(tx, call.AgentID, *call.AgentVersion)
		if err != nil {
			return err
		}
		if v != nil {
			bound = v.maxDuration()
		}
	}
	since := now
	if call.StartedAt != nil {
		since = call.StartedAt.Time
	}
	next := *r
	until := data.NewTime(since.Add(bound + data.AbandonGrace))
	next.LeaseUntil, next.UpdatedAt = &until, data.NewTime(now)
	return tx.PutRecipient(r, &next)
}

// endAttempt records how r's attempt ended (call nil when no call was made or it is
// gone) and moves r on: given back (lease_expired), completed, exhausted, suppressed, or
// pending again after the backoff; then its campaign's counts, and the campaign's
// completion.
func (b *base) endAttempt(ctx context.Context, tx Tx, r *data.Recipient, call *data.Call, outcome string, now time.Time) error {
	c, err := tx.Campaign(r.CampaignID)
	if err != nil || c == nil {
		return err
	}
	next := *r
	next.Attempts = slices.Clone(r.Attempts)
	at := data.NewTime(now)
	if i := len(next.Attempts) - 1; i >= 0 {
		a := &next.Attempts[i]
		a.EndedAt, a.Outcome = &at, &outcome
		if call != nil {
			status := call.Status
			a.Status, a.DisconnectionReason = &status, call.DisconnectionReason
		}
	}
	next.CallID, next.LeaseUntil, next.UpdatedAt = nil, nil, at
	if outcome == data.OutcomeLeaseExpired {
		next.AttemptCount--
		if c.Status == data.CampaignCanceled {
			next.State = data.RecipientCanceled
		} else {
			next.State = data.RecipientPending
			due := data.NewTime(compileWindow(c.Window).next(now, location(r.Timezone)))
			next.NextAt = &due
		}
	} else if err := b.decideRecipient(tx, c, &next, outcome, now); err != nil {
		return err
	}
	moveCounts(c, r, &next)
	if err := tx.PutRecipient(r, &next); err != nil {
		return err
	}
	c.UpdatedAt = at
	if err := tx.PutCampaign(c); err != nil {
		return err
	}
	return b.completeIfDone(ctx, tx, c, now)
}

// decideRecipient moves r after an attempt with outcome: completed when the outcome is
// not retried, exhausted when no attempt is left, suppressed when its number was added
// to the list meanwhile, canceled when its campaign was, else pending after the backoff,
// at its window's next opening.
func (b *base) decideRecipient(tx Tx, c *data.Campaign, r *data.Recipient, outcome string, now time.Time) error {
	r.NextAt = nil
	retried := outcome != data.OutcomeAnswered && slices.Contains(c.Retry.On, outcome)
	switch {
	case !retried:
		r.State, r.Outcome = data.RecipientCompleted, &outcome
	case r.AttemptCount >= c.Retry.MaxAttempts:
		r.State, r.Outcome = data.RecipientExhausted, &outcome
	case c.Status == data.CampaignCanceled:
		r.State, r.Outcome = data.RecipientCanceled, &outcome
	default:
		s, err := tx.SuppressionByPhone(c.WorkspaceID, r.PhoneNumber)
		if err != nil {
			return err
		}
		if s != nil {
			r.State = data.RecipientSuppressed
			return nil
		}
		r.State = data.RecipientPending
		backoff := time.Duration(c.Retry.BackoffMinutes) * time.Minute
		due := data.NewTime(compileWindow(c.Window).next(now.Add(backoff), location(r.Timezone)))
		r.NextAt = &due
	}
	return nil
}

// countedOutcome is the outcome a recipient counts under: its own once completed.
func countedOutcome(r *data.Recipient) string {
	if r.State == data.RecipientCompleted && r.Outcome != nil {
		return *r.Outcome
	}
	return ""
}

// moveCounts moves one recipient in c's counts from old's state to next's.
func moveCounts(c *data.Campaign, old, next *data.Recipient) {
	c.Counts.Add(old.State, countedOutcome(old), -1)
	c.Counts.Add(next.State, countedOutcome(next), 1)
}

// endDialCall ends a dial task's call for the system at now (failed with reason), with
// the events and figures of any call's end; the rollout and the campaign learn of it as
// of any end, the campaign at now.
func (b *base) endDialCall(ctx context.Context, tx Tx, old *data.Call, reason string, now time.Time) error {
	next := *old
	at := data.NewTime(now)
	next.Status, next.DisconnectionReason, next.EndedAt, next.UpdatedAt = data.CallFailed, &reason, &at, at
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
	if err := b.observeRollout(sys, tx, old, &next); err != nil {
		return err
	}
	return b.observeCampaignAt(sys, tx, old, &next, now)
}
