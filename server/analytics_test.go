package server_test

import (
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

func TestCallAnalyticsShapeAndCounts(t *testing.T) {
	c := newCallEnv(t)
	c.register(t, map[string]any{"status": "ended", "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:01:00Z", "disconnection_reason": "user_hangup"})
	c.register(t, map[string]any{"status": "ended", "duration_ms": 30_000, "disconnection_reason": "user_hangup"})
	c.register(t, map[string]any{"agent_id": c.agentB, "status": "failed", "disconnection_reason": "dial_failed"})
	c.register(t, map[string]any{"agent_id": c.agentB})
	now := time.Now().UTC()
	q := url.Values{"interval": {"hour"}, "from": {now.Add(-2 * time.Hour).Format(time.RFC3339)}, "to": {now.Add(time.Hour).Format(time.RFC3339)}}
	r := c.do("GET", "/api/v1/analytics/calls?"+q.Encode(), c.Owner.Token, nil)
	expect(t, r, 200)
	d := r.Data()
	var keys []string
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "disconnection_reasons,series,totals,versions" {
		t.Fatalf("data keys = %v", keys)
	}
	totals := d["totals"].(map[string]any)
	want := map[string]float64{"calls": 4, "ended": 2, "failed": 1, "total_duration_ms": 90_000, "average_duration_ms": 45_000}
	for k, v := range want {
		if totals[k] != v {
			t.Errorf("totals.%s = %v, want %v (%v)", k, totals[k], v, totals)
		}
	}
	if c, ok := totals["cost_micros"].(map[string]any); !ok || len(c) != 0 {
		t.Errorf("totals.cost_micros without any cost = %v", totals["cost_micros"])
	}
	if len(totals) != len(want)+1 {
		t.Errorf("totals keys: %v", totals)
	}
	series := d["series"].([]any)
	if len(series) != 3 && len(series) != 4 {
		t.Fatalf("hourly series over 3 hours has %d buckets", len(series))
	}
	var sum float64
	for _, p := range series {
		pt := p.(map[string]any)
		if len(pt) != 7 || !strings.HasSuffix(pt["start"].(string), ":00:00.000Z") {
			t.Errorf("series point %v", pt)
		}
		sum += pt["calls"].(float64)
	}
	if sum != 4 {
		t.Errorf("series calls sum to %v", sum)
	}
	reasons := d["disconnection_reasons"].(map[string]any)
	if reasons["user_hangup"] != float64(2) || reasons["dial_failed"] != float64(1) || len(reasons) != 2 {
		t.Errorf("reasons = %v", reasons)
	}
	q.Set("agent_id", c.agentB)
	tb := c.do("GET", "/api/v1/analytics/calls?"+q.Encode(), c.Owner.Token, nil).Data()["totals"].(map[string]any)
	if tb["calls"] != float64(2) || tb["failed"] != float64(1) || tb["average_duration_ms"] != float64(0) {
		t.Errorf("agent b totals = %v", tb)
	}
	// Default: the last 30 days by day, so today's calls are in the last bucket.
	def := c.do("GET", "/api/v1/analytics/calls", c.Owner.Token, nil).Data()
	ds := def["series"].([]any)
	if len(ds) != 31 || def["totals"].(map[string]any)["calls"] != float64(4) {
		t.Errorf("default range: %d buckets, totals %v", len(ds), def["totals"])
	}
	if last := ds[len(ds)-1].(map[string]any); last["calls"] != float64(4) || !strings.HasSuffix(last["start"].(string), "T00:00:00.000Z") {
		t.Errorf("last daily bucket = %v", last)
	}
	// A limited member sees only its agents.
	limited := c.member(c.ws, "l@example.com", data.RoleMember, nil, []string{c.agentA})
	lt := c.do("GET", "/api/v1/analytics/calls", limited, nil).Data()["totals"].(map[string]any)
	if lt["calls"] != float64(2) {
		t.Errorf("limited totals = %v", lt)
	}
	lb := c.do("GET", "/api/v1/analytics/calls?agent_id="+c.agentB, limited, nil).Data()["totals"].(map[string]any)
	if lb["calls"] != float64(0) {
		t.Errorf("limited member reads a hidden agent: %v", lb)
	}
	noModule := c.member(c.ws, "n@example.com", data.RoleOwner, nil, nil)
	expect(t, c.do("GET", "/api/v1/analytics/calls", noModule, nil), 200) // owners hold every module
	dev := c.member(c.ws, "d@example.com", data.RoleDeveloper, []string{data.ModuleCallHistory}, nil)
	expect(t, c.do("GET", "/api/v1/analytics/calls", dev, nil), 403)
}

func TestCallAnalyticsQueryRules(t *testing.T) {
	e := newEnv(t)
	get := func(q string) *response { return e.do("GET", "/api/v1/analytics/calls?"+q, e.Owner.Token, nil) }
	expectFields(t, get("interval=week"), "interval")
	expectFields(t, get("from=yesterday&to=2026-13-01T00:00:00Z"), "from", "to")
	expectFields(t, get("agent_id=agt_1"), "agent_id")
	expectFields(t, get("from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z"), "to")
	expectFields(t, get("from=2026-11-01T00:00:00Z&to=2026-11-01T00:00:00Z"), "to")
	// 2,000 hourly buckets pass, 2,001 do not; days allow far longer ranges.
	expect(t, get("interval=hour&from=2026-01-01T00:00:00Z&to=2026-03-25T08:00:00Z"), 200)
	expectFields(t, get("interval=hour&from=2026-01-01T00:00:00Z&to=2026-03-25T08:00:01Z"), "to")
	r := get("interval=day&from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z")
	expect(t, r, 200)
	if n := len(r.Data()["series"].([]any)); n != 365 {
		t.Errorf("a year by day has %d buckets", n)
	}
	r = get("interval=hour&from=2026-01-01T10:30:00Z&to=2026-01-01T12:00:00Z")
	expect(t, r, 200)
	s := r.Data()["series"].([]any)
	if len(s) != 2 || s[0].(map[string]any)["start"] != "2026-01-01T10:00:00.000Z" || s[0].(map[string]any)["calls"] != float64(0) {
		t.Errorf("empty aligned series = %v", s)
	}
}
