package server_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// Analytics split by agent_version: the per-version totals of an agent, and the filter to
// one version, the same from the stored hourly rollups (whole hours) and from the calls
// (a partial hour).
func TestAnalyticsByVersion(t *testing.T) {
	e := newStartEnv(t)
	e.twoVersions()
	reg := func(version int, status string, reason any, durationMS any) string {
		body := map[string]any{"agent_id": e.agent, "agent_version": version, "direction": "web", "status": status}
		if reason != nil {
			body["disconnection_reason"] = reason
		}
		if durationMS != nil {
			body["duration_ms"] = durationMS
		}
		r := e.Do("POST", "/api/v1/calls", e.Owner.Token, body)
		testkit.Expect(t, r, 201)
		return r.Data()["id"].(string)
	}
	reg(1, "ended", "user_hangup", 1000)
	reg(1, "failed", "abandoned", nil)
	reg(2, "ended", "user_hangup", 3000)
	reg(2, "ended", "user_hangup", 5000)
	open := reg(2, "registered", nil, nil)
	// An update moves the call's counts within its version (the stored call's rollup is
	// taken away under its version, the new one added).
	testkit.Expect(t, e.Do("PUT", "/api/v1/calls/"+open, e.Owner.Token, map[string]any{"status": "failed", "disconnection_reason": "busy"}), 200)

	hour := time.Now().UTC().Truncate(time.Hour)
	ranges := map[string][2]time.Time{
		"whole hours (rollups)":  {hour.Add(-time.Hour), hour.Add(2 * time.Hour)},
		"a partial hour (calls)": {time.Now().Add(-10 * time.Minute), time.Now().Add(time.Minute)},
	}
	for name, rg := range ranges {
		t.Run(name, func(t *testing.T) {
			q := url.Values{"agent_id": {e.agent}, "interval": {"hour"},
				"from": {rg[0].Format(time.RFC3339Nano)}, "to": {rg[1].Format(time.RFC3339Nano)}}
			all := e.Do("GET", "/api/v1/analytics/calls?"+q.Encode(), e.Owner.Token, nil)
			testkit.Expect(t, all, 200)
			vs := all.Data()["versions"].([]any)
			if len(vs) != 2 {
				t.Fatalf("versions: %v", vs)
			}
			v1, v2 := vs[0].(map[string]any), vs[1].(map[string]any)
			if v1["agent_version"] != float64(1) || v1["calls"] != float64(2) || v1["failed"] != float64(1) || v1["ended"] != float64(1) ||
				v2["agent_version"] != float64(2) || v2["calls"] != float64(3) || v2["ended"] != float64(2) || v2["failed"] != float64(1) ||
				v2["average_duration_ms"] != float64(4000) {
				t.Errorf("per version: %v", vs)
			}
			q.Set("agent_version", "2")
			one := e.Do("GET", "/api/v1/analytics/calls?"+q.Encode(), e.Owner.Token, nil)
			testkit.Expect(t, one, 200)
			d := one.Data()
			totals, reasons := d["totals"].(map[string]any), d["disconnection_reasons"].(map[string]any)
			if totals["calls"] != float64(3) || totals["total_duration_ms"] != float64(8000) || reasons["user_hangup"] != float64(2) ||
				reasons["busy"] != float64(1) || reasons["abandoned"] != nil || len(d["versions"].([]any)) != 1 {
				t.Errorf("version 2 only: %v", d)
			}
		})
	}
	ws := e.Do("GET", "/api/v1/analytics/calls", e.Owner.Token, nil).Data()
	if vs := ws["versions"].([]any); len(vs) != 0 || ws["totals"].(map[string]any)["calls"] != float64(5) {
		t.Errorf("the workspace's analytics: versions %v, totals %v", vs, ws["totals"])
	}
	testkit.ExpectFields(t, e.Do("GET", "/api/v1/analytics/calls?agent_version=1", e.Owner.Token, nil), "agent_version")
	testkit.ExpectFields(t, e.Do("GET", "/api/v1/analytics/calls?agent_id="+e.agent+"&agent_version=0", e.Owner.Token, nil), "agent_version")
}
