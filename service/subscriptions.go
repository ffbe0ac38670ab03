package service

import (
	"context"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// SubscriptionService reads a workspace's plan with its usage, and sets plans (the
// operator's CLI).
type SubscriptionService struct {
	*base
	// conversations holds the server's bound on open conversations, which the
	// open_conversations limit shows when the plan sets none.
	conversations *ConversationService
}

var _ data.SubscriptionService = (*SubscriptionService)(nil)

// monthOf returns the calendar month (UTC) holding t: the billing period.
func monthOf(t time.Time) (time.Time, time.Time) {
	t = t.UTC()
	start := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 1, 0)
}

// workspace checks that ws exists and that the caller acts in it: a principal sees only
// the subscription of the workspace it acts in; the operator (no principal) any.
func workspace(ctx context.Context, tx Tx, ws string) error {
	if p := data.PrincipalFrom(ctx); p != nil && p.WorkspaceID != ws {
		return data.NotFound("Workspace")
	}
	found, err := tx.WorkspaceExists(ws)
	if err != nil {
		return err
	}
	if !found {
		return data.NotFound("Workspace")
	}
	return nil
}

// subscription shows the workspace's plan with every limit (nil = unlimited) and the
// usage counted now; call minutes are those of calls that ended this month.
// open_conversations shows the bound in force (openBound): the plan's, else this
// server's --max-open-conversations, nil only when neither bounds.
func (s *SubscriptionService) subscription(tx Tx, ws string) (*data.Subscription, error) {
	pl, err := plan(tx, ws)
	if err != nil {
		return nil, err
	}
	now := s.now()
	start, end := monthOf(now)
	out := &data.Subscription{
		Plan: pl.Plan, Status: pl.Status, Limits: map[string]*int64{}, Usage: map[string]int64{},
		CurrentPeriodStart: data.NewTime(start), CurrentPeriodEnd: data.NewTime(end),
	}
	for _, name := range data.LimitNames {
		out.Limits[name] = nil
		if v, ok := pl.Limits[name]; ok {
			out.Limits[name] = &v
		}
		switch name {
		case data.LimitCallMinutes:
			out.Usage[name], err = usedMinutes(tx, ws, now)
		case data.LimitConcurrentCalls:
			out.Usage[name], err = s.openCalls(tx, ws) // calls open now, abandoned ones not
		case data.LimitOpenConversations:
			out.Limits[name], out.Usage[name], err = s.openConversations(tx, ws, now)
		default:
			out.Usage[name], err = tx.CountUpTo(name, ws, -1)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// openConversations is the bound on workspace ws's open conversations (nil: none) and
// how many it holds open at now, counted as a start counts them.
func (s *SubscriptionService) openConversations(tx Tx, ws string, now time.Time) (*int64, int64, error) {
	bound, err := s.conversations.openBound(tx, ws)
	if err != nil {
		return nil, 0, err
	}
	n, err := countOpenConversations(tx, ws, now, math.MaxInt64)
	if err != nil || !bound.bounded {
		return nil, n, err
	}
	return &bound.max, n, nil
}

// Subscription implements data.SubscriptionService.
func (s *SubscriptionService) Subscription(ctx context.Context, ws string) (*data.Subscription, error) {
	var out *data.Subscription
	err := s.store.View(ctx, func(tx Tx) error {
		if err := workspace(ctx, tx, ws); err != nil {
			return err
		}
		var err error
		out, err = s.subscription(tx, ws)
		return err
	})
	return out, err
}

// SetSubscription implements data.SubscriptionService. Only the operator sets plans: the
// CLI on a stopped server's data, or an instance administrator.
func (s *SubscriptionService) SetSubscription(ctx context.Context, ws string, in data.SubscriptionSet) (*data.Subscription, error) {
	if p := data.PrincipalFrom(ctx); p != nil && !p.IsAdmin {
		return nil, data.Errorf(data.EFORBIDDEN, "Only the instance's operator sets a workspace's plan.")
	}
	if err := validate.SubscriptionSet(in); err != nil {
		return nil, err
	}
	var out *data.Subscription
	err := s.store.Update(ctx, func(tx Tx) error {
		found, err := tx.WorkspaceExists(ws)
		if err != nil {
			return err
		}
		if !found {
			return data.NotFound("Workspace")
		}
		pl, err := plan(tx, ws)
		if err != nil {
			return err
		}
		next := *pl
		next.Limits = maps.Clone(pl.Limits)
		if next.Limits == nil {
			next.Limits = map[string]int64{}
		}
		if in.Plan != nil {
			next.Plan = strings.TrimSpace(*in.Plan)
		}
		for name, v := range in.Limits {
			if v < 0 {
				delete(next.Limits, name)
			} else {
				next.Limits[name] = v
			}
		}
		next.UpdatedAt = s.timeNow()
		if err := tx.PutSubscriptionPlan(ws, &next); err != nil {
			return err
		}
		if out, err = s.subscription(tx, ws); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventSubscriptionUpdated, ws, out)
		return err
	})
	return out, err
}
