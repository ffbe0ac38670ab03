package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// twoVersions publishes e.agent a second time with another welcome message: versions 1
// and 2 ("Hello …" and "Welcome …").
func (e *startEnv) twoVersions() {
	e.t.Helper()
	testkit.Expect(e.t, e.Do("PUT", "/api/v1/agents/"+e.agent, e.Owner.Token,
		map[string]any{"prompt_config": map[string]any{"welcome_message": "Welcome {{customer_name}}!"}}), 200)
	testkit.Expect(e.t, e.Do("POST", "/api/v1/agents/"+e.agent+"/publish", e.Owner.Token, nil), 204)
}

func (e *startEnv) rollout(body map[string]any) map[string]any {
	e.t.Helper()
	r := e.Do("PUT", "/api/v1/agents/"+e.agent+"/rollout", e.Owner.Token, body)
	testkit.Expect(e.t, r, 200)
	return r.Data()
}

func (e *startEnv) rolloutNow() *testkit.Response {
	e.t.Helper()
	return e.Do("GET", "/api/v1/agents/"+e.agent+"/rollout", e.Owner.Token, nil)
}

func variants(weights ...int) []any {
	out := make([]any, len(weights))
	for i, w := range weights {
		out[i] = map[string]any{"version": i + 1, "weight": w}
	}
	return out
}

// Through the API: callers keep their variant across calls, the split follows the
// weights, the answer runs the variant's own version, and the variant is named.
func TestRolloutThroughCallStart(t *testing.T) {
	e := newStartEnv(t)
	e.twoVersions()
	e.rollout(map[string]any{"variants": variants(70, 30)})
	counts := map[float64]int{}
	const n = 150
	for i := range n {
		caller := fmt.Sprintf("+1555%07d", i)
		call, agent, variant := answer(t, e.start(inbound(caller, nil)))
		again, _, _ := answer(t, e.start(inbound(caller, nil)))
		v := variant["version"].(float64)
		if again["agent_version"] != v || call["agent_version"] != v || variant["rollout"] != true || agent["version"] != v {
			t.Fatalf("caller %s: first call %v, second %v, variant %v", caller, call["agent_version"], again["agent_version"], variant)
		}
		wantWelcome := map[float64]string{1: "Hello there!", 2: "Welcome there!"}[v]
		if group(agent, "prompt_config")["welcome_message"] != wantWelcome {
			t.Errorf("variant %v runs %v", v, group(agent, "prompt_config")["welcome_message"])
		}
		counts[v]++
	}
	// 150 callers: a weight of 30 gives 45, one standard deviation 5.6; the hash's seed is
	// the rollout's start, so the bound is 4 deviations (±22: a false failure in 16,000
	// runs, where 2.6 failed about one run in 100). TestVariantWeightsAndStickiness
	// (service) proves the split's precision over 10,000 callers.
	if counts[2] < 23 || counts[2] > 67 || counts[1]+counts[2] != n {
		t.Errorf("split %v for weights 70/30", counts)
	}
}

// A rollout's life: validation (nothing stored), the events, a PUT that keeps the start,
// If-Match, and its end by DELETE, by publish and by restore.
func TestRolloutLifecycle(t *testing.T) {
	e := newStartEnv(t)
	e.twoVersions()
	path := "/api/v1/agents/" + e.agent + "/rollout"
	testkit.Expect(t, e.rolloutNow(), 404)
	bad := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"weights sum to 90", map[string]any{"variants": variants(60, 30)}, []string{"variants"}},
		// The sum refuses no variant: an unpublished one is told with it.
		{"weights sum to 90, and an unpublished version", map[string]any{"variants": []any{map[string]any{"version": 1, "weight": 60},
			map[string]any{"version": 3, "weight": 30}}}, []string{"variants", "variants.1.version"}},
		{"an unpublished version", map[string]any{"variants": []any{map[string]any{"version": 1, "weight": 50}, map[string]any{"version": 3, "weight": 50}}}, []string{"variants.1.version"}},
		{"a version twice", map[string]any{"variants": []any{map[string]any{"version": 1, "weight": 50}, map[string]any{"version": 1, "weight": 50}}}, []string{"variants.1.version"}},
		{"a weight over 100", map[string]any{"variants": []any{map[string]any{"version": 1, "weight": 101}, map[string]any{"version": 2, "weight": -1}}}, []string{"variants.0.weight", "variants.1.weight"}},
		{"a weight not an integer", map[string]any{"variants": []any{map[string]any{"version": 1, "weight": 50.5}, map[string]any{"version": 2, "weight": 49.5}}}, []string{"variants", "variants.0.weight", "variants.1.weight"}},
		{"no variants", map[string]any{"variants": []any{}}, []string{"variants"}},
		// Weight 0 and threshold 0 are values (no callers; any failure rolls back): left
		// out, neither may read as 0.
		{"a weight left out", map[string]any{"variants": []any{map[string]any{"version": 1, "weight": 100}, map[string]any{"version": 2}}}, []string{"variants.1.weight"}},
		{"a rollback without its threshold", map[string]any{"variants": variants(50, 50), "rollback": map[string]any{"metric": "failed_rate", "min_calls": 50}},
			[]string{"rollback.threshold"}},
		{"eleven variants", map[string]any{"variants": variants(10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 0)}, []string{"variants"}},
		{"a bad rollback", map[string]any{"variants": variants(50, 50), "rollback": map[string]any{"metric": "latency", "threshold": 1.5, "min_calls": 0}},
			[]string{"rollback.metric", "rollback.threshold", "rollback.min_calls"}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			r := e.Do("PUT", path, e.Owner.Token, c.body)
			testkit.ExpectFields(t, r, c.fields...)
			testkit.Expect(t, e.rolloutNow(), 404)
		})
	}
	first := e.rollout(map[string]any{"variants": variants(90, 10), "rollback": map[string]any{"metric": "failed_rate", "threshold": 0.25, "min_calls": 20}})
	second := e.rollout(map[string]any{"variants": variants(80, 20)})
	if first["started_at"] != second["started_at"] || second["rollback"] != nil || len(second["variants"].([]any)) != 2 {
		t.Errorf("a PUT on a standing rollout: %v then %v", first, second)
	}
	shown := e.rolloutNow()
	testkit.Expect(t, e.Do("PUT", path, e.Owner.Token, map[string]any{"variants": variants(50, 50)}, "If-Match", `"stale"`), 412)
	testkit.Expect(t, e.Do("DELETE", path, e.Owner.Token, nil, "If-Match", shown.Header.Get("ETag")), 204)
	testkit.Expect(t, e.Do("DELETE", path, e.Owner.Token, nil), 404)
	_, _, variant := answer(t, e.start(inbound("+15550001111", nil)))
	if variant["rollout"] != false || variant["version"] != float64(2) {
		t.Errorf("after DELETE the published version runs: %v", variant)
	}

	e.rollout(map[string]any{"variants": variants(50, 50)})
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+e.agent+"/publish", e.Owner.Token, nil), 204)
	testkit.Expect(t, e.rolloutNow(), 404)
	e.rollout(map[string]any{"variants": variants(50, 50)})
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+e.agent+"/versions/1/restore", e.Owner.Token, nil), 200)
	testkit.Expect(t, e.rolloutNow(), 404)

	types := strings.Join(e.auditTypes(), ",")
	for _, want := range []string{data.EventRolloutUpdated, data.EventRolloutEnded} {
		if !strings.Contains(types, want) {
			t.Errorf("the audit log lacks %s: %s", want, types)
		}
	}
	// Writing rollouts needs the right to write agents.
	member := e.Member("member@example.com", e.ws, data.RoleMember, nil, nil)
	testkit.Expect(t, e.Do("PUT", path, member.Token, map[string]any{"variants": variants(50, 50)}), 403)
	testkit.Expect(t, e.Do("PUT", path, e.runtime, map[string]any{"variants": variants(50, 50)}), 403)
}

// auditTypes lists the workspace's event types, newest first, as the owner reads them.
func (e *startEnv) auditTypes() []string {
	e.t.Helper()
	r := e.Do("GET", "/api/v1/audit-log?per_page=100", e.Owner.Token, nil)
	testkit.Expect(e.t, r, 200)
	var out []string
	for _, ev := range r.List() {
		out = append(out, ev.(map[string]any)["type"].(string))
	}
	return out
}

// endAs ends a call through the runtime's key: failed or ended, with analysis when given.
func (e *startEnv) endAs(callID, status string, analysis map[string]any) {
	e.t.Helper()
	body := map[string]any{"status": status}
	if analysis != nil {
		body["analysis"] = analysis
	}
	testkit.Expect(e.t, e.Do("PUT", "/api/v1/calls/"+callID, e.runtime, body), 204)
}

// The automatic rollback on failed_rate: nothing moves before both variants have
// min_calls finished calls; then the failing variant's weight goes to the other, the
// event is recorded (by the system), and new callers all get the winner.
func TestRolloutRollsBackOnFailedRate(t *testing.T) {
	e := newStartEnv(t)
	e.twoVersions()
	e.rollout(map[string]any{"variants": variants(50, 50), "rollback": map[string]any{"metric": "failed_rate", "threshold": 0.3, "min_calls": 4}})
	// Every call of version 2 fails and none of version 1 does: were version 2's calls
	// past its fourth ended well, a draw that gave it ten more before version 1 had four
	// would bring its failed rate under the threshold (4 of 14), and nothing would roll back.
	ended := map[float64]int{}
	for i := 0; ended[1] < 4 || ended[2] < 4; i++ {
		if i > 200 {
			t.Fatalf("no rollback after %d calls: %v", i, ended)
		}
		call, _, variant := answer(t, e.start(inbound(fmt.Sprintf("+1556%07d", i), nil)))
		v := variant["version"].(float64)
		status := map[float64]string{1: "ended", 2: "failed"}[v]
		if ended[v] >= 4 {
			e.endAs(call["id"].(string), status, nil)
			ended[v]++
			continue
		}
		before := e.rolloutNow().Data()
		e.endAs(call["id"].(string), status, nil)
		ended[v]++
		if ended[1] < 4 || ended[2] < 4 {
			if w := before["variants"].([]any)[1].(map[string]any)["weight"]; w != float64(50) {
				t.Fatalf("rolled back before both variants had min_calls: %v", before)
			}
		}
	}
	r := e.rolloutNow().Data()
	v1, v2 := r["variants"].([]any)[0].(map[string]any), r["variants"].([]any)[1].(map[string]any)
	if v1["weight"] != float64(100) || v2["weight"] != float64(0) || v2["rolled_back"] != true || v2["failed"] != float64(ended[2]) || v1["failed"] != float64(0) {
		t.Fatalf("after the rollback: %v", r)
	}
	ev := e.Do("GET", "/api/v1/audit-log?type="+data.EventRolloutRolledBack, e.Owner.Token, nil).List()
	if len(ev) != 1 || ev[0].(map[string]any)["actor"].(map[string]any)["type"] != "system" {
		t.Errorf("rolled_back events: %v", ev)
	}
	for i := range 20 {
		_, _, variant := answer(t, e.start(inbound(fmt.Sprintf("+1557%07d", i), nil)))
		if variant["version"] != float64(1) {
			t.Fatalf("a new caller got the rolled back version: %v", variant)
		}
	}
}

// The automatic rollback on success_rate: the analysis's call_successful decides, and a
// call's analysis that arrives after its end counts.
func TestRolloutRollsBackOnSuccessRate(t *testing.T) {
	e := newStartEnv(t)
	e.twoVersions()
	e.rollout(map[string]any{"variants": variants(50, 50), "rollback": map[string]any{"metric": "success_rate", "threshold": 0.5, "min_calls": 3}})
	judged := map[float64]int{}
	for i := 0; judged[1] < 3 || judged[2] < 3; i++ {
		if i > 200 {
			t.Fatalf("no rollback after %d calls: %v", i, judged)
		}
		call, _, variant := answer(t, e.start(inbound(fmt.Sprintf("+1558%07d", i), nil)))
		v := variant["version"].(float64)
		id := call["id"].(string)
		e.endAs(id, "ended", nil)
		// Success is judged later, as post-call analysis would.
		e.endAs(id, "ended", map[string]any{"call_successful": v == 1, "summary": "…"})
		judged[v]++
	}
	// The loop stops at the analysis that gave both variants min_calls: the rollback's. A
	// variant may have more than min_calls by then (the callers' hash decides the split).
	r := e.rolloutNow().Data()
	v1, v2 := r["variants"].([]any)[0].(map[string]any), r["variants"].([]any)[1].(map[string]any)
	if v1["weight"] != float64(100) || v2["weight"] != float64(0) || v2["successful"] != float64(0) || v1["successful"] != v1["analyzed"] ||
		v1["analyzed"] != float64(judged[1]) || v2["analyzed"] != float64(judged[2]) || v2["calls"] != float64(judged[2]) {
		t.Fatalf("after the rollback: %v", r)
	}
}
