package service_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

func TestCallAnalyticsQueryAndScope(t *testing.T) {
	e := newCallsEnv(t)
	start := e.now // 2026-11-20T08:00Z
	registerAnalyticsCalls(t, e, start)

	// Defaults on the service's clock: the last 30 days by day, ending now.
	e.now = start.Add(2 * time.Hour)
	def := checkDefaultAnalyticsRange(t, e, start)
	hourly := data.CallAnalyticsQuery{From: start, To: start.Add(3 * time.Hour), Interval: data.IntervalHour}
	checkHourlyAnalytics(t, e, hourly, def)
	checkAnalyticsScope(t, e, hourly)
	checkAnalyticsRangeBounds(t, e)
}

// registerAnalyticsCalls registers four calls: agent a's two ended ones an hour and a
// half apart, then agent b's failed and registered ones.
func registerAnalyticsCalls(t *testing.T, e *callsEnv, start time.Time) {
	t.Helper()
	reg := func(agent, status string, d int64, reason string) {
		t.Helper()
		in := data.CallCreate{AgentID: agent, Direction: data.DirectionWeb, Status: &status}
		if d > 0 {
			in.DurationMS = &d
		}
		if reason != "" {
			in.DisconnectionReason = &reason
		}
		if _, err := e.svc.Calls.RegisterCall(e.owner, in); err != nil {
			t.Fatal(err)
		}
	}
	reg(e.a, data.CallEnded, 60_000, "user_hangup")
	e.now = start.Add(90 * time.Minute)
	reg(e.a, data.CallEnded, 30_000, "user_hangup")
	reg(e.b, data.CallFailed, 0, "dial_failed")
	reg(e.b, data.CallRegistered, 0, "")
}

// checkDefaultAnalyticsRange checks the defaults (the last 30 days by day, ending now)
// and returns that answer.
func checkDefaultAnalyticsRange(t *testing.T, e *callsEnv, start time.Time) *data.CallAnalytics {
	t.Helper()
	def, err := e.svc.Analytics.CallAnalytics(e.owner, data.CallAnalyticsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(def.Series) != 31 || def.Totals.Calls != 4 || def.Series[30].Calls != 4 || !def.Series[30].Start.Equal(start.Truncate(24*time.Hour)) {
		t.Errorf("default range: %d buckets, totals %+v, last %+v", len(def.Series), def.Totals, def.Series[len(def.Series)-1])
	}
	want := data.CallTotals{Calls: 4, Ended: 2, Failed: 1, TotalDurationMS: 90_000, AverageDurationMS: 45_000, CostMicros: map[string]int64{}}
	if !reflect.DeepEqual(def.Totals, want) {
		t.Errorf("totals = %+v, want %+v", def.Totals, want)
	}
	if r := def.DisconnectionReasons; r["user_hangup"] != 2 || r["dial_failed"] != 1 || len(r) != 2 {
		t.Errorf("reasons = %v", r)
	}
	return def
}

// checkHourlyAnalytics checks the hourly buckets. Each bucket's average divides by the
// calls that have a duration, as the totals' does: the second hour's failed and
// registered calls have none, so 30 s, not 10 s; and the one day's average is the
// totals' own.
func checkHourlyAnalytics(t *testing.T, e *callsEnv, hourly data.CallAnalyticsQuery, def *data.CallAnalytics) {
	t.Helper()
	h, err := e.svc.Analytics.CallAnalytics(e.owner, hourly)
	if err != nil || len(h.Series) != 3 || h.Series[0].Calls != 1 || h.Series[1].Calls != 3 || h.Series[2].Calls != 0 {
		t.Fatalf("hourly = %+v, %v", h, err)
	}
	if a0, a1, a2 := h.Series[0].AverageDurationMS, h.Series[1].AverageDurationMS, h.Series[2].AverageDurationMS; a0 != 60_000 || a1 != 30_000 || a2 != 0 {
		t.Errorf("hourly averages = %d, %d, %d; want 60000, 30000, 0", a0, a1, a2)
	}
	if got := def.Series[30].AverageDurationMS; got != def.Totals.AverageDurationMS {
		t.Errorf("the day's average %d differs from the totals' %d for the same calls", got, def.Totals.AverageDurationMS)
	}
}

// checkAnalyticsScope checks one agent's figures, a limited caller's sum of its agents,
// and that a hidden agent or another workspace counts nothing.
func checkAnalyticsScope(t *testing.T, e *callsEnv, hourly data.CallAnalyticsQuery) {
	t.Helper()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		agent string
		calls int64
	}{
		{"agent b", e.owner, e.b, 2},
		{"limited to a", e.limited(e.a), "", 2},
		{"limited to a and b", e.limited(e.a, e.b), "", 4},
		{"limited, hidden agent", e.limited(e.a), e.b, 0},
		{"another workspace", e.otherCtx, "", 0},
	} {
		q := hourly
		q.AgentID = tc.agent
		got, err := e.svc.Analytics.CallAnalytics(tc.ctx, q)
		if err != nil || got.Totals.Calls != tc.calls || len(got.Series) != 3 {
			t.Errorf("%s: %+v, %v; want %d calls", tc.name, got, err, tc.calls)
		}
	}
}

// checkAnalyticsRangeBounds checks the range: to after from, at most
// MaxAnalyticsBuckets buckets (the bound is accepted, one more hour is not), a known
// interval.
func checkAnalyticsRangeBounds(t *testing.T, e *callsEnv) {
	t.Helper()
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		q    data.CallAnalyticsQuery
		want string // "" accepted, else the faulty field
	}{
		{data.CallAnalyticsQuery{From: from, To: from.Add(validate.MaxAnalyticsBuckets * time.Hour), Interval: data.IntervalHour}, ""},
		{data.CallAnalyticsQuery{From: from, To: from.Add(validate.MaxAnalyticsBuckets*time.Hour + time.Millisecond), Interval: data.IntervalHour}, "to"},
		{data.CallAnalyticsQuery{From: from, To: from, Interval: data.IntervalDay}, "to"},
		{data.CallAnalyticsQuery{From: from, To: from.Add(time.Hour), Interval: "week"}, "interval"},
	} {
		_, err := e.svc.Analytics.CallAnalytics(e.owner, tc.q)
		if tc.want == "" && err != nil {
			t.Errorf("%v..%v by %s: %v", tc.q.From, tc.q.To, tc.q.Interval, err)
		} else if tc.want != "" {
			wantFields(t, err, tc.want)
		}
	}
}
