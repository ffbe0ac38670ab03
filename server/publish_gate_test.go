package server_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// gate reads the agent's publish gate.
func (e *testsEnv) gate(t *testing.T, agentID string) map[string]any {
	t.Helper()
	r := e.Do("GET", "/api/v1/agents/"+agentID+"/publish-gate", e.tok, nil)
	testkit.Expect(t, r, 200)
	return r.Data()
}

// TestPublishGate walks the gate of conventions §22 through the API: an agent with a
// required test publishes only when a run of its current draft (its revision) passed it as
// the test stands now. No run: tests_required. A failing run: tests_failed naming the
// test and the run. The test fixed: its old result no longer counts. A passing run of an
// older revision: tests_required. A passing run of this one: published. Tests that are
// not required never hold a publish back.
func TestPublishGate(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	required := scripted("greets by name", []string{"hello"}, map[string]any{"type": "says", "pattern": "Pizzeria"})
	required["required_for_publish"] = true
	req := e.createTest(t, agent, required)
	e.createTest(t, agent, scripted("optional and failing", []string{"hello"}, map[string]any{"type": "says", "pattern": "never said"}))

	// No run.
	r := e.publish(t, e.tok, agent, false, 409)
	if r.Code() != data.ETESTSREQUIRED || !strings.Contains(r.JSON()["message"].(string), `"greets by name" (not_run)`) {
		t.Fatalf("no run: %s", r.Body)
	}
	g := e.gate(t, agent)
	if g["state"] != data.GateTestsRequired || !strings.HasPrefix(g["revision"].(string), "c1-") {
		t.Errorf("gate with no run: %v", g)
	}

	// A failing run (the agent greets as Trattoria).
	failing := e.run(t, agent, nil)
	r = e.publish(t, e.tok, agent, false, 409)
	if msg := r.JSON()["message"].(string); r.Code() != data.ETESTSFAILED || !strings.Contains(msg, `"greets by name" (failed in `+failing["id"].(string)+")") ||
		strings.Contains(msg, "optional") {
		t.Fatalf("failing run: %s", r.Body)
	}
	if g := e.gate(t, agent); g["state"] != data.GateTestsFailed || g["required"].([]any)[0].(map[string]any)["run_id"] != failing["id"] {
		t.Errorf("gate after a failing run: %v", g)
	}

	// The test changed: the failing result was of the test as it was.
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent+"/tests/"+req["id"].(string), e.tok,
		map[string]any{"criteria": []map[string]any{{"type": "says", "pattern": "Trattoria"}}}), 200)
	if g := e.gate(t, agent); g["state"] != data.GateTestsRequired {
		t.Errorf("gate after the test changed: %v", g)
	}

	// A passing run of this revision, then the draft changes: an older revision's pass.
	if run := e.run(t, agent, nil); resultOf(t, run, "greets by name")["status"] != data.TestPassed {
		t.Fatalf("the fixed test did not pass: %v", run["results"])
	}
	if g := e.gate(t, agent); g["state"] != data.GateOpen {
		t.Fatalf("gate after a passing run: %v", g)
	}
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, e.tok, map[string]any{"prompt_config": map[string]any{"prompt": "You take bookings for {{shop}}, kindly."}}), 200)
	if r := e.publish(t, e.tok, agent, false, 409); r.Code() != data.ETESTSREQUIRED {
		t.Fatalf("a pass of an older revision let the draft through: %s", r.Body)
	}

	// A passing run of the current revision (only the required test: test_ids).
	e.run(t, agent, map[string]any{"test_ids": []string{req["id"].(string)}})
	e.publish(t, e.tok, agent, false, 204)
	if a := e.Do("GET", "/api/v1/agents/"+agent, e.tok, nil).Data(); a["status"] != data.AgentStatusPublished || a["published_version"] != 1.0 {
		t.Errorf("after the publish: %v %v", a["status"], a["published_version"])
	}

	// An agent without required tests publishes whatever its tests say.
	free := e.bookingAgent(t, "Free")
	e.createTest(t, free, scripted("failing", []string{"hello"}, map[string]any{"type": "says", "pattern": "never"}))
	e.publish(t, e.tok, free, false, 204)
	if g := e.gate(t, free); g["state"] != data.GateOpen || len(g["required"].([]any)) != 0 {
		t.Errorf("gate without required tests: %v", g)
	}
}

// TestPublishForce: owners and admins may publish past the gate with {"force": true},
// which is audited as agent.published_untested naming the gate it passed; a developer may
// not (403), and nothing is published then.
func TestPublishForce(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	required := scripted("greets by name", []string{"hello"}, map[string]any{"type": "says", "pattern": "Pizzeria"})
	required["required_for_publish"] = true
	e.createTest(t, agent, required)
	dev := e.Member("dev@example.com", e.Owner.WorkspaceID, data.RoleDeveloper, nil, nil)
	admin := e.Member("admin@example.com", e.Owner.WorkspaceID, data.RoleAdmin, nil, nil)
	if r := e.publish(t, dev.Token, agent, true, 403); !strings.Contains(r.JSON()["message"].(string), "owners and admins") {
		t.Errorf("a developer's force: %s", r.Body)
	}
	if a := e.Do("GET", "/api/v1/agents/"+agent, e.tok, nil).Data(); a["published_version"] != nil {
		t.Fatalf("a refused force published: %v", a["published_version"])
	}
	e.publish(t, admin.Token, agent, true, 204)
	ev := e.Do("GET", "/api/v1/audit-log?type=agent.published_untested", e.tok, nil)
	testkit.Expect(t, ev, 200)
	l := ev.List()
	if len(l) != 1 {
		t.Fatalf("audit: %s", ev.Body)
	}
	m := l[0].(map[string]any)
	d := m["data"].(map[string]any)
	if d["agent_id"] != agent || d["version"] != 1.0 || d["state"] != data.GateTestsRequired ||
		m["actor"].(map[string]any)["user_id"] != admin.ID || d["required"].([]any)[0].(map[string]any)["status"] != data.GateNotRun {
		t.Errorf("agent.published_untested: %v", m)
	}
	// A force with the gate open is an ordinary publish: nothing untested to audit.
	e.run(t, agent, nil)
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent+"/tests/"+l[0].(map[string]any)["data"].(map[string]any)["required"].([]any)[0].(map[string]any)["test_id"].(string), e.tok,
		map[string]any{"required_for_publish": false}), 200)
	e.publish(t, e.tok, agent, true, 204)
	if again := e.Do("GET", "/api/v1/audit-log?type=agent.published_untested", e.tok, nil).List(); len(again) != 1 {
		t.Errorf("a publish through an open gate was audited as untested: %d events", len(again))
	}
}
