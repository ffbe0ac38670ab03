package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// gateCheck reads the agent's gate after each step of a walk.
type gateCheck struct {
	e     *testsEnv
	agent string
	run   map[string]any // the one passing run of the tested draft
}

// open fails unless the gate is open on the tested revision, by that run.
func (c gateCheck) open(t *testing.T, step string) {
	t.Helper()
	g := c.e.gate(t, c.agent)
	req := g["required"].([]any)[0].(map[string]any)
	if g["state"] != data.GateOpen || g["revision"] != c.run["revision"] || req["run_id"] != c.run["id"] {
		t.Fatalf("%s: the gate is not open on the tested revision %v by run %v: %v", step, c.run["revision"], c.run["id"], g)
	}
}

// closed fails unless a publish is refused as untested, on another revision.
func (c gateCheck) closed(t *testing.T, step string) {
	t.Helper()
	if r := c.e.publish(t, c.e.tok, c.agent, false, 409); r.Code() != data.ETESTSREQUIRED {
		t.Fatalf("%s: publish answered %s", step, r.Body)
	}
	if g := c.e.gate(t, c.agent); g["state"] != data.GateTestsRequired || g["revision"] == c.run["revision"] {
		t.Fatalf("%s: gate %v", step, g)
	}
}

func (c gateCheck) etag(t *testing.T) string {
	t.Helper()
	return c.e.Do("GET", "/api/v1/agents/"+c.agent, c.e.tok, nil).Header.Get("ETag")
}

// TestPublishGateKeyedByContent: the gate keys on the draft's revision, what of its
// configuration a test can observe, not on the record's ETag (ux friction 14). One run
// passes; then a publish, another publish, a rename with a capacity and a voice, a
// rollout, and a restore of the tested version each change the ETag and leave the gate
// open on that run, so the agent publishes again and again without another; a
// one-character prompt change, a tools change, a new api_key and a changed default
// variable each close it (tests_required) until a restore brings the tested
// configuration back. A forced publish is still audited.
func TestPublishGateKeyedByContent(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	required := scripted("greets by name", []string{"hello"}, map[string]any{"type": "says", "pattern": "Trattoria"})
	required["required_for_publish"] = true
	e.createTest(t, agent, required)
	c := gateCheck{e: e, agent: agent, run: e.run(t, agent, nil)}
	if c.run["status"] != data.TestPassed {
		t.Fatalf("the run did not pass: %v", c.run)
	}
	c.open(t, "the run")

	touch := func(step string, do func()) {
		t.Helper()
		before := c.etag(t)
		do()
		if c.etag(t) == before {
			t.Fatalf("%s left the ETag as it was: the step proves nothing", step)
		}
		c.open(t, "after "+step)
	}
	touch("a publish", func() { e.publish(t, e.tok, agent, false, 204) })
	touch("a second publish", func() { e.publish(t, e.tok, agent, false, 204) })
	touch("a rename, a capacity and a voice", func() {
		testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, e.tok, map[string]any{"name": "Trattoria Roma",
			"max_concurrent_calls": 3, "tts_config": map[string]any{"voice_id": "another-voice"}}), 200)
	})
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent+"/rollout", e.tok, map[string]any{
		"variants": []map[string]any{{"version": 1, "weight": 50}, {"version": 2, "weight": 50}}}), 200)
	c.open(t, "with a rollout")
	touch("a publish ending the rollout", func() { e.publish(t, e.tok, agent, false, 204) })

	changes := []struct {
		step string
		body map[string]any
	}{
		{"a one-character prompt change", map[string]any{"prompt_config": map[string]any{"prompt": "You take bookings for {{shop}}!"}}},
		{"a tools change", map[string]any{"llm_config": map[string]any{"tools": []map[string]any{{"name": "hang_up", "type": "end_call"}}}}},
		{"a new api_key", map[string]any{"llm_config": map[string]any{"api_key": "sk-another-key-1234567890"}}},
		{"a default variable", map[string]any{"prompt_config": map[string]any{"default_variables": map[string]any{"shop": "Roma"}}}},
	}
	for i, ch := range changes {
		testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, e.tok, ch.body), 200)
		c.closed(t, ch.step)
		// A rollback to the version published from the tested draft: tested again.
		touch(fmt.Sprintf("restoring version 1 after %s", ch.step), func() {
			testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/versions/1/restore", e.tok, nil), 200)
		})
		if i == 0 {
			e.publish(t, e.tok, agent, false, 204)
		}
	}
	if runs := e.Do("GET", "/api/v1/agents/"+agent+"/test-runs", e.tok, nil).List(); len(runs) != 1 {
		t.Errorf("%d runs: every publish above should have gone through on the first", len(runs))
	}

	// Forced past a closed gate: still audited, naming the untested revision.
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, e.tok, changes[0].body), 200)
	untested := e.gate(t, agent)["revision"]
	e.publish(t, e.tok, agent, true, 204)
	l := e.Do("GET", "/api/v1/audit-log?type=agent.published_untested", e.tok, nil).List()
	if len(l) != 1 {
		t.Fatalf("agent.published_untested: %d events", len(l))
	}
	if d := l[0].(map[string]any)["data"].(map[string]any); d["revision"] != untested || d["state"] != data.GateTestsRequired ||
		!strings.HasPrefix(d["revision"].(string), "c1-") {
		t.Errorf("agent.published_untested: %v (the draft's revision %v)", d, untested)
	}
}

// TestPublishGateCountsRunsStoredBeforeRevisions: a run stored before draft revisions
// existed carries the agent's ETag as its revision. It still counts while that ETag names
// the agent (the old rule: it ran on this very record), and stops counting once the
// record changes, as it did before; it is never lost from the runs.
func TestPublishGateCountsRunsStoredBeforeRevisions(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	required := scripted("greets by name", []string{"hello"}, map[string]any{"type": "says", "pattern": "Trattoria"})
	required["required_for_publish"] = true
	e.createTest(t, agent, required)
	run := e.run(t, agent, nil)
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, e.tok, map[string]any{"prompt_config": map[string]any{"prompt": "Bookings for {{shop}}."}}), 200)
	c := gateCheck{e: e, agent: agent, run: run}
	c.closed(t, "a prompt change")

	// The run as an older server would have stored it on the record as it is now.
	etag := c.etag(t)
	old := data.NewIDGen().New(data.PrefixTestRun)
	err := e.Store.Update(context.Background(), func(tx service.Tx) error {
		r, err := tx.TestRun(run["id"].(string))
		if err != nil {
			return err
		}
		results, err := tx.TestResults(r.ID)
		if err != nil {
			return err
		}
		r.ID, r.Revision = old, &etag
		if err := tx.PutTestRun(r); err != nil {
			return err
		}
		for _, res := range results {
			if err := tx.PutTestResult(old, res); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g := e.gate(t, agent)
	if req := g["required"].([]any)[0].(map[string]any); g["state"] != data.GateOpen || req["run_id"] != old {
		t.Fatalf("the old run of the current ETag does not count: %v", g)
	}
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, e.tok, map[string]any{"name": "Trattoria Roma"}), 200)
	if g := e.gate(t, agent); g["state"] != data.GateTestsRequired {
		t.Fatalf("the old run still counts on a record it never ran on: %v", g)
	}
	if r := e.Do("GET", "/api/v1/agents/"+agent+"/test-runs/"+old, e.tok, nil); r.Status != 200 || r.Data()["revision"] != etag {
		t.Errorf("the old run: %d %s", r.Status, r.Body)
	}
}
