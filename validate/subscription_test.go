package validate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

func TestSubscriptionSetRules(t *testing.T) {
	plan := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		in   data.SubscriptionSet
		want string // faulty paths, comma-joined and sorted; "" accepted
	}{
		{"nothing", data.SubscriptionSet{}, ""},
		{"plan at the bound", data.SubscriptionSet{Plan: plan(strings.Repeat("p", validate.MaxPlanLen))}, ""},
		{"plan past the bound", data.SubscriptionSet{Plan: plan(strings.Repeat("p", validate.MaxPlanLen+1))}, "plan"},
		{"blank plan", data.SubscriptionSet{Plan: plan("  ")}, "plan"},
		{"limit 0", data.SubscriptionSet{Limits: map[string]int64{data.LimitAgents: 0}}, ""},
		{"limit -1 lifts", data.SubscriptionSet{Limits: map[string]int64{data.LimitCallMinutes: -1}}, ""},
		{"limit -2", data.SubscriptionSet{Limits: map[string]int64{data.LimitNumbers: -2}}, data.LimitNumbers},
		{"unknown limit", data.SubscriptionSet{Limits: map[string]int64{"seats": 1}}, "seats"},
		{"open conversations 0", data.SubscriptionSet{Limits: map[string]int64{data.LimitOpenConversations: 0}}, ""},
		{"open conversations -1", data.SubscriptionSet{Limits: map[string]int64{data.LimitOpenConversations: -1}}, ""},
		{"open conversations -2", data.SubscriptionSet{Limits: map[string]int64{data.LimitOpenConversations: -2}}, data.LimitOpenConversations},
		{"open conversations at the bound", data.SubscriptionSet{Limits: map[string]int64{data.LimitOpenConversations: validate.MaxOpenConversations}}, ""},
		{"open conversations past the bound", data.SubscriptionSet{Limits: map[string]int64{data.LimitOpenConversations: validate.MaxOpenConversations + 1}}, data.LimitOpenConversations},
		{"another limit past that bound", data.SubscriptionSet{Limits: map[string]int64{data.LimitAgents: validate.MaxOpenConversations + 1}}, ""},
		{"every fault at once", data.SubscriptionSet{Plan: plan(""), Limits: map[string]int64{"seats": 1, data.LimitWebhooks: -5}}, "plan,seats,webhooks"},
	} {
		if got := fields(t, validate.SubscriptionSet(tc.in)); got != tc.want {
			t.Errorf("%s: faults on %q, want %q", tc.name, got, tc.want)
		}
	}
}

// An open_conversations limit out of range, below or above, is told what -1 means for it:
// the plan's limit taken away leaves the server's bound, so "-1 (unlimited)" would be
// untrue. Other limits keep their message.
func TestSubscriptionSetOpenConversationsMessage(t *testing.T) {
	for _, v := range []int64{-2, validate.MaxOpenConversations + 1} {
		err := validate.SubscriptionSet(data.SubscriptionSet{Limits: map[string]int64{data.LimitOpenConversations: v}})
		if err == nil || !strings.Contains(err.Error(), "-1 (the server's bound)") || strings.Contains(err.Error(), "unlimited") {
			t.Errorf("open_conversations %d: %v, want it to say -1 is the server's bound", v, err)
		}
	}
	err := validate.SubscriptionSet(data.SubscriptionSet{Limits: map[string]int64{data.LimitAgents: -2}})
	if err == nil || !strings.Contains(err.Error(), "-1 (unlimited)") {
		t.Errorf("agents -2: %v, want -1 (unlimited)", err)
	}
}

// TestAnalyticsParamsLeaveDefaultsToTheRange: the query string's parameters are read
// without a clock; CallAnalyticsRange fills the defaults on the one it is given.
func TestAnalyticsParamsLeaveDefaultsToTheRange(t *testing.T) {
	q, err := validate.CallAnalyticsParams(nil)
	if err != nil || !q.From.IsZero() || !q.To.IsZero() || q.Interval != "" {
		t.Fatalf("params of an empty query = %+v, %v", q, err)
	}
	now := time.Date(2026, 11, 21, 10, 4, 5, 0, time.UTC)
	if err := validate.CallAnalyticsRange(&q, now); err != nil || q.Interval != data.IntervalDay || !q.To.Equal(now.Add(time.Millisecond)) || q.To.Sub(q.From) != validate.DefaultAnalyticsRange {
		t.Errorf("defaults = %+v, %v", q, err)
	}
	bad := data.CallAnalyticsQuery{Interval: "minute"}
	if got := fields(t, validate.CallAnalyticsRange(&bad, now)); got != "interval" {
		t.Errorf("an interval the query string cannot carry: faults on %q", got)
	}
}
