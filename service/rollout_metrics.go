package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
)

// partyOf is whom a call's variant sticks to: the other party (the caller of an inbound
// call, the number called by an outbound one), else the call itself.
func partyOf(in data.CallStart, callID string) string {
	switch {
	case in.Direction == data.DirectionInbound && in.FromNumber != nil:
		return *in.FromNumber
	case in.Direction == data.DirectionOutbound && in.ToNumber != nil:
		return *in.ToNumber
	}
	return callID
}

// callSuccess reads a call's analysis.call_successful: ok when it is a boolean.
func callSuccess(analysis map[string]any) (success, ok bool) {
	success, ok = analysis["call_successful"].(bool)
	return success, ok
}

// observeRollout counts a call's change in its agent's rollout (old nil for a new call):
// a call created since the rollout began, of one of its versions and not a web
// conversation, counts once when it reaches a final status (failed or not), and in the
// analyzed figures while its analysis holds a boolean call_successful. Then the rollback
// is judged; a variant rolled back is told as agent.rollout_rolled_back.
func (b *base) observeRollout(ctx context.Context, tx Tx, old, next *data.Call) error {
	if next.Direction == data.DirectionWeb || next.AgentVersion == nil {
		return nil
	}
	ended := data.CallFinal(next.Status) && (old == nil || !data.CallFinal(old.Status))
	var wasOK, wasJudged bool
	if old != nil {
		wasOK, wasJudged = callSuccess(old.Analysis)
	}
	isOK, isJudged := callSuccess(next.Analysis)
	if !ended && wasJudged == isJudged && wasOK == isOK {
		return nil
	}
	r, err := tx.Rollout(next.AgentID)
	if err != nil || r == nil || next.CreatedAt.Before(r.StartedAt.Time) {
		return err
	}
	i := variantIndex(&r.Rollout, *next.AgentVersion)
	if i < 0 {
		return nil
	}
	f := &r.Variants[i].RolloutFigures
	if ended {
		f.Calls++
		if next.Status == data.CallFailed {
			f.Failed++
		}
	}
	if wasJudged {
		f.Analyzed--
		if wasOK {
			f.Successful--
		}
	}
	if isJudged {
		f.Analyzed++
		if isOK {
			f.Successful++
		}
	}
	r.UpdatedAt = b.timeNow()
	r.Slots = slotsOf(r) // a rollout stored before the map gets it now
	rolled := rollBack(&r.Rollout)
	if rolled {
		r.Slots = reslot(r.Slots, r.Variants) // only the loser's callers move
	}
	if err := tx.PutRollout(r); err != nil {
		return err
	}
	if rolled {
		_, err = b.recordAs(tx, data.Actor{Type: "system"}, data.EventRolloutRolledBack, r.WorkspaceID, &r.Rollout)
	}
	return err
}

func variantIndex(r *data.Rollout, version int) int {
	for i, v := range r.Variants {
		if v.Version == version {
			return i
		}
	}
	return -1
}

// rollBack applies r's automatic rollback once and reports whether it took a variant's
// weight. Only variants that still have weight and at least min_calls measured calls
// (finished calls for failed_rate, analyzed ones for success_rate) are judged. When one
// of them is past the threshold (failed rate above it, success rate below it) and another
// is within it, the worst past it loses its whole weight to the best within it, and is
// marked rolled_back. When every judged variant is past the threshold, nothing moves:
// there is no better version to send its callers to.
func rollBack(r *data.Rollout) bool {
	rb := r.Rollback
	if rb == nil {
		return false
	}
	failed := rb.Metric == data.MetricFailedRate
	measure := func(v *data.RolloutVariant) (float64, bool) {
		if failed {
			rate, _ := v.FailedRate()
			return rate, v.Calls >= int64(rb.MinCalls)
		}
		rate, _ := v.SuccessRate()
		return rate, v.Analyzed >= int64(rb.MinCalls)
	}
	// worse reports whether rate a is worse than rate b under the metric.
	worse := func(a, b float64) bool { return failed && a > b || !failed && a < b }
	var loser, winner *data.RolloutVariant
	var loserRate, winnerRate float64
	for i := range r.Variants {
		v := &r.Variants[i]
		rate, judged := measure(v)
		if v.Weight == 0 || !judged {
			continue
		}
		if worse(rate, rb.Threshold) {
			if loser == nil || worse(rate, loserRate) {
				loser, loserRate = v, rate
			}
		} else if winner == nil || worse(winnerRate, rate) {
			winner, winnerRate = v, rate
		}
	}
	if loser == nil || winner == nil {
		return false
	}
	winner.Weight += loser.Weight
	loser.Weight, loser.RolledBack = 0, true
	return true
}
