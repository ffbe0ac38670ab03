package service

import (
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// plan returns the workspace's plan, the default (unlimited) one when none was set.
func plan(tx Tx, workspaceID string) (*data.SubscriptionPlan, error) {
	p, err := tx.SubscriptionPlan(workspaceID)
	if err != nil || p != nil {
		return p, err
	}
	return data.DefaultSubscriptionPlan(), nil
}

// checkQuota refuses a create that would pass the workspace's limit for kind. It runs in
// the create's write transaction, so concurrent creates cannot pass a limit together.
func checkQuota(tx Tx, workspaceID, kind string) error {
	p, err := plan(tx, workspaceID)
	if err != nil {
		return err
	}
	limit, limited := p.Limits[kind]
	if !limited {
		return nil
	}
	n, err := tx.CountUpTo(kind, workspaceID, limit)
	if err != nil {
		return err
	}
	if n >= limit {
		return data.Errorf(data.EQUOTA, "The workspace has reached its %s limit of %d; raise it with voiceapi subscription set.", kind, limit)
	}
	return nil
}

// checkCallMinutes refuses a call register once the calls that ended this month used up
// the call_minutes_per_month limit, counted as the subscription shows it.
func checkCallMinutes(tx Tx, workspaceID string, now time.Time) error {
	left, limit, err := callMinutesLeft(tx, workspaceID, now)
	if err != nil || left {
		return err
	}
	return data.Errorf(data.EQUOTA, "The workspace has used its %s limit of %s this month.", data.LimitCallMinutes, countOf(limit, "minute"))
}

// callMinutesLeft reports whether the workspace may open a call under its
// call_minutes_per_month limit, and the limit; a dial-task claim at the limit leases
// nothing but still gives back the leases that ran out, so it asks rather than fails.
func callMinutesLeft(tx Tx, workspaceID string, now time.Time) (bool, int64, error) {
	p, err := plan(tx, workspaceID)
	if err != nil {
		return false, 0, err
	}
	limit, limited := p.Limits[data.LimitCallMinutes]
	if !limited {
		return true, 0, nil
	}
	used, err := usedMinutes(tx, workspaceID, now)
	if err != nil {
		return false, 0, err
	}
	return used < limit, limit, nil
}

// usedMinutes returns the minutes of the workspace's calls that ended in the month of t,
// rounded up: a started minute counts.
func usedMinutes(tx Tx, workspaceID string, t time.Time) (int64, error) {
	ms, err := tx.EndedCallMillisInMonth(workspaceID, t)
	return (ms + 59_999) / 60_000, err
}
