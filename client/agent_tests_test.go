package client_test

import (
	"context"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/service"
)

// agentTests tours the tests of an agent, a test made from a call, a run waited for and
// the publish gate, publishing past it and through it.
func (tr *tour) agentTests() {
	c, ctx, check := tr.c, tr.ctx, tr.check
	runner := tr.s.svc.Jobs.NewRunner(service.RunnerOptions{Poll: 20 * time.Millisecond, Kinds: []string{service.JobKindTestRun}})
	runner.Start(context.Background())
	defer runner.Stop(context.Background())
	tr.s.model.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("Welcome!") })
	cfg := tr.s.model.LLMConfig()
	agent, _, err := c.Agents.Create(ctx, client.AgentInput{Name: ptr("Tested"), LLMConfig: &cfg})
	check("agent for tests", err)

	tr.writeAgentTests(agent.ID)
	tr.checkGateHeld(agent.ID)
	tr.runTestsOnStream(agent.ID)
	check("publish through the gate", c.Agents.Publish(ctx, agent.ID, nil))
	_, _, err = c.Agents.Update(ctx, agent.ID, client.AgentInput{Name: ptr("Tested again")})
	check("a draft change", err)
	check("publish past the gate", c.Agents.PublishForce(ctx, agent.ID, ptr("forced")))
}

// writeAgentTests creates a required test, updates it under its ETag, makes one from a
// call, lists both and deletes the second.
func (tr *tour) writeAgentTests(agentID string) {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	test, etag, err := c.AgentTests.Create(ctx, agentID, data.AgentTestCreate{Name: "greets", User: data.TestUser{Script: []string{"hi"}},
		Criteria: []data.Criterion{{Type: data.CriterionSays, Pattern: "Welcome"}}, RequiredForPublish: true, Repeat: data.Some(2)})
	check("test create", err)
	if test.Repeat != 2 || test.MaxTurns != data.DefaultTestMaxTurns || !test.RequiredForPublish {
		t.Errorf("test = %+v", test)
	}
	got, _, err := c.AgentTests.Get(ctx, agentID, test.ID)
	check("test show", err)
	body := client.TestBody(*got)
	body["repeat"] = 1
	updated, _, err := c.AgentTests.Update(ctx, agentID, test.ID, body, client.IfMatch(etag))
	check("test update", err)
	if updated.Repeat != 1 {
		t.Errorf("updated = %+v", updated)
	}
	call, _, err := c.Calls.Register(ctx, data.CallCreate{AgentID: agentID, Direction: data.DirectionWeb,
		Transcript: []data.TranscriptItem{{Role: "user", Content: "hello there"}}})
	check("call for a test", err)
	fromCall, _, err := c.AgentTests.FromCall(ctx, agentID, call.ID)
	check("test from a call", err)
	if len(fromCall.User.Script) != 1 || fromCall.User.Script[0] != "hello there" {
		t.Errorf("from call = %+v", fromCall)
	}
	tests, err := client.Collect(c.AgentTests.All(ctx, agentID))
	check("test list", err)
	if len(tests) != 2 {
		t.Errorf("tests = %d", len(tests))
	}
	check("test delete", c.AgentTests.Delete(ctx, agentID, fromCall.ID))
}

// checkGateHeld checks the gate holds the publish before a run.
func (tr *tour) checkGateHeld(agentID string) {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	gate, err := c.TestRuns.PublishGate(ctx, agentID)
	check("gate", err)
	if gate.State != data.GateTestsRequired {
		t.Errorf("gate before a run = %+v", gate)
	}
	if e := mustErr(t, c.Agents.Publish(ctx, agentID, nil), 409); e.Code != data.ETESTSREQUIRED {
		t.Errorf("publish before a run: %+v", e)
	}
}

// runTestsOnStream starts a run and follows its course, live on the event stream, then
// waits for it and lists it.
func (tr *tour) runTestsOnStream(agentID string) {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	streamCtx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	stream, err := c.Audit.Stream(streamCtx, client.StreamOptions{Types: []string{data.EventTestRunQueued, data.EventTestRunStarted,
		data.EventTestRunProgress, data.EventTestRunCompleted}})
	check("event stream", err)
	defer stream.Close()
	run, err := c.TestRuns.Start(ctx, agentID, data.TestRunCreate{})
	check("run start", err)
	var seen []string
	for len(seen) == 0 || seen[len(seen)-1] != data.EventTestRunCompleted {
		e, err := stream.Next()
		check("stream read", err)
		seen = append(seen, e.Type)
	}
	if strings.Join(seen, " ") != "test_run.queued test_run.started test_run.progress test_run.completed" {
		t.Errorf("the run on the event stream: %v", seen)
	}
	run, err = c.TestRuns.Wait(ctx, agentID, run.ID, 20*time.Millisecond)
	check("run wait", err)
	if run.Status != data.TestPassed || len(run.Results) != 1 || run.Results[0].Repeats[0].Status != data.TestPassed {
		t.Errorf("run = %+v", run)
	}
	runs, _, err := c.TestRuns.List(ctx, agentID, data.TestRunFilter{}, data.PageRequest{})
	check("run list", err)
	for status, want := range map[string]int{data.TestPassed: 1, data.TestFailed: 0} {
		got, _, err := c.TestRuns.List(ctx, agentID, data.TestRunFilter{Status: status}, data.PageRequest{})
		check("run list by status", err)
		if len(got) != want {
			t.Errorf("runs %s: %d, want %d", status, len(got), want)
		}
	}
	if len(runs) != 1 || runs[0].Results != nil {
		t.Errorf("runs = %+v", runs)
	}
}
