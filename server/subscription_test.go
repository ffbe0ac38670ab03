package server_test

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

func TestSubscriptionDefaultAndLimits(t *testing.T) {
	e := newEnv(t)
	ws := e.Owner.WorkspaceID
	r := e.do("GET", "/api/v1/subscription", e.Owner.Token, nil)
	expect(t, r, 200)
	s := r.Data()
	if s["plan"] != "unlimited" || s["status"] != "active" {
		t.Errorf("default plan: %v", s)
	}
	limits, usage := s["limits"].(map[string]any), s["usage"].(map[string]any)
	for _, name := range data.LimitNames {
		if v, ok := limits[name]; !ok || v != nil {
			t.Errorf("limits.%s = %v, want null", name, v)
		}
		if _, ok := usage[name]; !ok {
			t.Errorf("usage lacks %s", name)
		}
	}
	if len(limits) != len(data.LimitNames) || len(usage) != len(data.LimitNames) || len(s) != 6 {
		t.Errorf("shape: %v", s)
	}
	if usage["workspace_users"] != float64(1) || usage["numbers"] != float64(0) || usage["call_minutes_per_month"] != float64(0) {
		t.Errorf("usage = %v", usage)
	}
	now := time.Now().UTC()
	start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	if s["current_period_start"] != start.Format(data.TimeLayout) || s["current_period_end"] != start.AddDate(0, 1, 0).Format(data.TimeLayout) {
		t.Errorf("period %v – %v", s["current_period_start"], s["current_period_end"])
	}

	plan := "team"
	if _, err := e.setSubscription(t.Context(), ws, data.SubscriptionSet{Plan: &plan, Limits: map[string]int64{data.LimitNumbers: 1, data.LimitWorkspaceUsers: 2}}); err != nil {
		t.Fatal(err)
	}
	expect(t, e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+15551110000", "provider": "sip"}), 201)
	r = e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+15551110001", "provider": "sip"})
	expect(t, r, 403)
	if r.Code() != data.EQUOTA {
		t.Errorf("code = %s", r.Code())
	}
	// workspace_users: the owner and one more.
	e.member(ws, "one@example.com", data.RoleMember, nil, nil)
	two := e.newUser("two@example.com", false)
	r = e.do("POST", "/api/v1/workspaces/"+ws+"/users", e.Owner.Token, map[string]any{"id": two.ID, "role": "member"})
	expect(t, r, 403)
	if r.Code() != data.EQUOTA {
		t.Errorf("members over the limit: %s", r.Body)
	}
	s = e.do("GET", "/api/v1/subscription", e.Owner.Token, nil).Data()
	if s["plan"] != "team" || s["limits"].(map[string]any)["numbers"] != float64(1) || s["usage"].(map[string]any)["numbers"] != float64(1) || s["usage"].(map[string]any)["workspace_users"] != float64(2) {
		t.Errorf("after set: %v", s)
	}
	// -1 lifts a limit; any member, even one without modules, reads the plan.
	if _, err := e.setSubscription(t.Context(), ws, data.SubscriptionSet{Limits: map[string]int64{data.LimitNumbers: -1, data.LimitWorkspaceUsers: -1}}); err != nil {
		t.Fatal(err)
	}
	expect(t, e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+15551110001", "provider": "sip"}), 201)
	member := e.member(ws, "m@example.com", data.RoleMember, []string{}, nil)
	s = e.do("GET", "/api/v1/subscription", member, nil).Data()
	if s["plan"] != "team" || s["limits"].(map[string]any)["numbers"] != nil || s["usage"].(map[string]any)["numbers"] != float64(2) {
		t.Errorf("member reads %v", s)
	}
	if _, err := e.setSubscription(t.Context(), ws, data.SubscriptionSet{Limits: map[string]int64{"seats": 1, data.LimitAgents: -2}}); data.ErrorCode(err) != data.EINVALID {
		t.Errorf("bad limits: %v", err)
	}
}

// TestSubscriptionUsageIsTheWorkspaces: a member limited to agent A reads the same usage
// as the owner, counted over the whole workspace (B and the number that routes B's calls
// included), while its lists show A alone: the limits are the workspace's, and a create
// refused with quota_exceeded must be explainable to whoever it refuses (docs/
// subscription.md). The counts say how many, never which. Both engines.
func TestSubscriptionUsageIsTheWorkspaces(t *testing.T) {
	e := newEnv(t)
	ws, owner := e.Owner.WorkspaceID, e.Owner.Token
	agent := func(name string) string {
		r := e.do("POST", "/api/v1/agents", owner, map[string]any{"name": name})
		expect(t, r, 201)
		return r.Data()["id"].(string)
	}
	a, b := agent("A"), agent("B")
	expect(t, e.do("POST", "/api/v1/numbers", owner, map[string]any{"phone_number": "+15551110000", "provider": "sip", "inbound_agent_id": b}), 201)
	if _, err := e.setSubscription(t.Context(), ws, data.SubscriptionSet{Limits: map[string]int64{data.LimitAgents: 2}}); err != nil {
		t.Fatal(err)
	}
	limited := e.member(ws, "limited@example.com", data.RoleDeveloper, nil, []string{a})
	if n := len(e.do("GET", "/api/v1/agents", limited, nil).List()); n != 1 {
		t.Fatalf("the limited member lists %d agents, want A alone", n)
	}
	want := e.do("GET", "/api/v1/subscription", owner, nil).Data()["usage"].(map[string]any)
	got := e.do("GET", "/api/v1/subscription", limited, nil).Data()["usage"].(map[string]any)
	if got["agents"] != float64(2) || got["numbers"] != float64(1) || got["workspace_users"] != float64(2) {
		t.Errorf("the limited member's usage %v: want the workspace's 2 agents, 1 number, 2 members", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("usage.%s: the limited member reads %v, the owner %v", k, got[k], v)
		}
	}
}
