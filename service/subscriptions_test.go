package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

func TestSubscriptionPlanAndUsage(t *testing.T) {
	e := newCallsEnv(t)
	op := context.Background() // the operator's CLI
	s, err := e.svc.Subscriptions.Subscription(e.owner, e.ws)
	if err != nil {
		t.Fatal(err)
	}
	if s.Plan != data.DefaultPlan || s.Status != "active" || len(s.Limits) != len(data.LimitNames) || s.Limits[data.LimitAgents] != nil || s.Usage[data.LimitAgents] != 2 {
		t.Fatalf("default subscription = %+v", s)
	}
	if !s.CurrentPeriodStart.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) || !s.CurrentPeriodEnd.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("period = %v..%v", s.CurrentPeriodStart, s.CurrentPeriodEnd)
	}

	plan := " pro "
	s, err = e.svc.Subscriptions.SetSubscription(op, e.ws, data.SubscriptionSet{Plan: &plan, Limits: map[string]int64{data.LimitNumbers: 0, data.LimitAgents: 5}})
	if err != nil || s.Plan != "pro" || *s.Limits[data.LimitNumbers] != 0 || *s.Limits[data.LimitAgents] != 5 {
		t.Fatalf("set = %+v, %v", s, err)
	}
	// -1 lifts a limit; the others stay.
	s, err = e.svc.Subscriptions.SetSubscription(op, e.ws, data.SubscriptionSet{Limits: map[string]int64{data.LimitAgents: -1}})
	if err != nil || s.Limits[data.LimitAgents] != nil || *s.Limits[data.LimitNumbers] != 0 || s.Plan != "pro" {
		t.Fatalf("lift = %+v, %v", s, err)
	}

	// Every bad member is named, at the bounds, and the stored plan is unchanged.
	blank, long, longest := " ", strings.Repeat("p", validate.MaxPlanLen+1), strings.Repeat("p", validate.MaxPlanLen)
	_, err = e.svc.Subscriptions.SetSubscription(op, e.ws, data.SubscriptionSet{Plan: &blank, Limits: map[string]int64{"seats": 1, data.LimitWebhooks: -2}})
	wantFields(t, err, "plan", "seats", data.LimitWebhooks)
	_, err = e.svc.Subscriptions.SetSubscription(op, e.ws, data.SubscriptionSet{Plan: &long})
	wantFields(t, err, "plan")
	if s, _ := e.svc.Subscriptions.Subscription(e.owner, e.ws); s.Plan != "pro" || s.Limits[data.LimitWebhooks] != nil {
		t.Errorf("a refused set changed the plan: %+v", s)
	}
	if _, err := e.svc.Subscriptions.SetSubscription(op, e.ws, data.SubscriptionSet{Plan: &longest, Limits: map[string]int64{data.LimitWebhooks: -1}}); err != nil {
		t.Errorf("a plan name of %d characters, limit -1: %v", validate.MaxPlanLen, err)
	}

	// A workspace member does not set plans; nobody reads another workspace's.
	_, err = e.svc.Subscriptions.SetSubscription(e.owner, e.ws, data.SubscriptionSet{Limits: map[string]int64{data.LimitNumbers: 100}})
	wantCode(t, err, data.EFORBIDDEN)
	_, err = e.svc.Subscriptions.Subscription(e.otherCtx, e.ws)
	wantCode(t, err, data.ENOTFOUND)
	_, err = e.svc.Subscriptions.SetSubscription(op, "ws_01JD6ZZZZZZZZZZZZZZZZZZZZZ", data.SubscriptionSet{})
	wantCode(t, err, data.ENOTFOUND)

	// Call minutes show the calls that ended this month, a started minute counted whole.
	if _, err := e.svc.Calls.RegisterCall(e.owner, data.CallCreate{AgentID: e.a, Direction: data.DirectionWeb, Status: ptr(data.CallEnded), DurationMS: ptr(int64(60_001))}); err != nil {
		t.Fatal(err)
	}
	if s, _ := e.svc.Subscriptions.Subscription(e.owner, e.ws); s.Usage[data.LimitCallMinutes] != 2 {
		t.Errorf("call minutes used = %d, want 2", s.Usage[data.LimitCallMinutes])
	}
}

// A plan change is an audited event of the workspace, made by the operator.
func TestSubscriptionChangeIsAudited(t *testing.T) {
	e := newCallsEnv(t)
	plan := "pro"
	if _, err := e.svc.Subscriptions.SetSubscription(context.Background(), e.ws, data.SubscriptionSet{Plan: &plan}); err != nil {
		t.Fatal(err)
	}
	list, _, err := e.svc.Audit.ListAuditLog(e.owner, data.AuditFilter{Type: data.EventSubscriptionUpdated}, data.PageRequest{})
	if err != nil || len(list) != 1 || list[0].Actor.Type != "system" || !strings.Contains(string(list[0].Data), `"plan":"pro"`) {
		t.Fatalf("subscription.updated events: %+v, %v", list, err)
	}
}
