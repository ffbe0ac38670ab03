package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// TestJobErrorIsScrubbedOfEverySecretItsWorkCouldSend: a job's error quoting a credential
// its work could have sent (a provider or endpoint echoing what it was given) is stored
// without it, so GET /jobs, the console and job.failed show none: the agent's current
// model key, a stored version's key and custom function credential header (an analysis or
// a test run of that version sends them), the key of the draft its test run was queued
// with, the workspace's simulation and embeddings keys. Both engines.
func TestJobErrorIsScrubbedOfEverySecretItsWorkCouldSend(t *testing.T) {
	e := newJobEnv(t)
	u := mustUser(t, e.svc, "ada@example.com")
	ws, ctx := u.PersonalWorkspaceID, testkit.As(u)
	const (
		published  = "gsk_published_7d1e2f3a4b5c6d7e" // version 1's key, replaced since
		header     = "sk_live_header_5f6e7d8c9b0a"    // version 1's custom function credential, removed since
		queued     = "gsk_queued_9a8b7c6d5e4f3a2b1c"  // the draft's when its test run was queued
		current    = "gsk_current_1q2w3e4r5t6y7u8i"
		simulation = "gsk_simulation_0p9o8i7u6y5t4r"
		embeddings = "emb_key_3e4r5t6y7u8i9o0p1a2s"
	)
	secrets := []string{published, header, queued, current, simulation, embeddings}
	a := mustAgent(t, ctx, e.svc.Agents, `{"name":"Echo","llm_config":{"provider":"groq","model":"llama-3.3-70b-versatile","api_key":"`+published+`",
		"tools":[{"name":"crm","type":"custom_function","http_method":"POST","api_endpoint":"https://crm.example.com/o","custom_function_headers":["Authorization: Bearer `+header+`"]}]}}`)
	if err := e.svc.Agents.PublishAgent(ctx, a.ID, data.PublishRequest{}); err != nil {
		t.Fatal(err)
	}
	setKey := func(key, tools string) {
		t.Helper()
		if _, err := e.svc.Agents.UpdateAgent(ctx, a.ID, decode[data.AgentUpdate](t, `{"llm_config":{"api_key":"`+key+`"`+tools+`}}`)); err != nil {
			t.Fatal(err)
		}
	}
	setKey(queued, `,"tools":[]`)
	if _, err := e.svc.AgentTests.CreateAgentTest(ctx, a.ID, data.AgentTestCreate{Name: "greets",
		User: data.TestUser{Script: []string{"hello"}}, Criteria: []data.Criterion{{Type: data.CriterionSays, Pattern: "Welcome"}}}); err != nil {
		t.Fatal(err)
	}
	run, err := e.svc.TestRuns.StartTestRun(ctx, a.ID, data.TestRunCreate{})
	if err != nil {
		t.Fatal(err)
	}
	setKey(current, "")
	if _, err := e.svc.Workspaces.UpdateWorkspace(ctx, ws, decode[data.WorkspaceUpdate](t, `{
		"embeddings":{"base_url":"https://embed.example.com/v1","model":"text-embedding-3-small","api_key":"`+embeddings+`"},
		"simulation":{"provider":"groq","model":"llama-3.3-70b-versatile","api_key":"`+simulation+`"}}`)); err != nil {
		t.Fatal(err)
	}
	said := "401 from the provider: it was sent " + strings.Join(secrets, ", ") + "; and masked: " + current[:4] + "***" + current[len(current)-4:]
	e.svc.Jobs.Register(service.JobKind{Name: "test.echo", Module: data.ModuleAgents, Handle: func(context.Context, *service.JobRun) error {
		return errors.New(said)
	}})
	j := e.enqueue(data.JobEnqueue{WorkspaceID: ws, Kind: "test.echo", AgentID: a.ID, MaxAttempts: 1,
		Payload: json.RawMessage(`{"run_id":"` + run.ID + `"}`)})
	runner := e.svc.Jobs.NewRunner(service.RunnerOptions{Owner: "r", Lease: time.Minute, Heartbeat: time.Hour, Now: e.clock.now,
		Jitter: noJitter, Kinds: []string{"test.echo"}})
	if n := e.runDue(runner); n != 1 {
		t.Fatalf("ran %d jobs, want the one", n)
	}
	read, err := e.svc.Jobs.Job(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]*string{"stored": e.job(j.ID).LastError, "GET /jobs/{id}": read.LastError}
	for _, f := range e.jobFailures(ws) {
		if f.ID == j.ID {
			shown["job.failed"] = f.LastError
		}
	}
	if len(shown) != 3 {
		t.Fatalf("no job.failed for the job")
	}
	for where, msg := range shown {
		if msg == nil || !strings.HasPrefix(*msg, "401 from the provider: it was sent [redacted]") {
			t.Errorf("%s: last_error %q, want the failure told", where, deref(msg))
			continue
		}
		for _, s := range secrets {
			if strings.Contains(*msg, s[len(s)-8:]) {
				t.Errorf("%s: last_error %q shows %s", where, *msg, s)
			}
		}
		if strings.Contains(*msg, "***") {
			t.Errorf("%s: last_error %q shows the masked key's ends", where, *msg)
		}
	}
}
