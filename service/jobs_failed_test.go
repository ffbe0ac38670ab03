package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/strictjson"
)

// jobFailures returns the job.failed events of ws, oldest first, as the audit log stores them.
func (e *jobEnv) jobFailures(ws string) []data.JobFailure {
	e.t.Helper()
	var out []data.JobFailure
	if err := e.store.View(context.Background(), func(tx service.Tx) error {
		out = nil
		return tx.EventsAfter(ws, "", func(ev *data.Event) (bool, error) {
			if ev.Type == data.EventJobFailed {
				var f data.JobFailure
				if err := json.Unmarshal(ev.Data, &f); err != nil {
					return false, err
				}
				if ev.Actor.Type != "system" {
					e.t.Errorf("job.failed's actor is %+v, want system", ev.Actor)
				}
				out = append(out, f)
			}
			return true, nil
		})
	}); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// TestJobFailedIsSentOnceForEveryKind: a job of each registered kind whose last attempt's
// worker died fails for good when claimed again, with one job.failed each, naming the
// job and what it worked on; the runner that died never sends one, and nothing more is
// sent later. The kinds' own Failed hooks run beside it.
func TestJobFailedIsSentOnceForEveryKind(t *testing.T) {
	e := newJobEnv(t)
	kinds := map[string]string{ // each kind with a payload naming what its work is about
		"knowledge_base.fetch_url": `{"knowledge_base_id":"kb_1","source_id":"src_1","attempt":1}`,
		"knowledge_base.embed":     `{"knowledge_base_id":"kb_1"}`,
		"analysis.call":            `{"call_id":"call_1"}`,
		"analysis.backfill":        `{"agent_id":"agt_1"}`,
		"agent.test_run":           `{"run_id":"run_1"}`,
		"campaign.start":           `{"campaign_id":"cmp_1"}`,
	}
	jobs := map[string]*data.JobRecord{}
	for kind, payload := range kinds {
		in := data.JobEnqueue{Kind: kind, Payload: []byte(payload), MaxAttempts: 1}
		if !strings.HasPrefix(kind, "knowledge_base.") {
			in.AgentID = "agt_1"
		}
		jobs[kind] = e.enqueue(in)
	}
	// A runner that dies: its claims commit, then nothing more is heard of it.
	if err := e.store.Update(context.Background(), func(tx service.Tx) error {
		_, _, err := tx.ClaimJobs(data.JobClaim{Kinds: slices.Sorted(maps.Keys(kinds)), Owner: "dead", Now: e.clock.now(),
			LeaseUntil: e.clock.now().Add(time.Minute), Limit: 10})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := e.jobFailures("ws_1"); len(got) != 0 {
		t.Fatalf("job.failed before any job failed: %+v", got)
	}
	e.clock.move(time.Minute)
	r, claimed := e.runner("r"), 0
	for n := e.runDue(r); n > 0; n = e.runDue(r) { // a pass runs as many as the runner has workers
		claimed += n
	}
	if claimed != len(kinds) {
		t.Fatalf("claimed %d jobs after the leases ended, want %d", claimed, len(kinds))
	}
	e.clock.move(time.Hour)
	e.runDue(e.runner("r2"))
	byJob := map[string][]data.JobFailure{}
	for _, f := range e.jobFailures("ws_1") {
		byJob[f.ID] = append(byJob[f.ID], f)
	}
	for kind, j := range jobs {
		got := byJob[j.ID]
		if len(got) != 1 {
			t.Errorf("%s: %d job.failed events, want 1", kind, len(got))
			continue
		}
		f, stored := got[0], e.job(j.ID)
		if f.Kind != kind || f.Status != data.JobFailed || f.Attempt != 2 || f.MaxAttempts != 1 || f.LastError == nil ||
			*f.LastError != *stored.LastError || f.FinishedAt == nil || !f.FinishedAt.Equal(stored.FinishedAt.Time) {
			t.Errorf("%s: job.failed %+v; want the failed job as stored, %+v", kind, f, stored.Job)
		}
		if (f.AgentID != nil) != (j.AgentID != nil) {
			t.Errorf("%s: agent_id %v, want %v", kind, f.AgentID, j.AgentID)
		}
		want := map[string]*string{"knowledge_base_id": f.KnowledgeBaseID, "campaign_id": f.CampaignID, "call_id": f.CallID, "test_run_id": f.TestRunID}
		for member, id := range want {
			payloadKey := strings.Replace(member, "test_run_id", "run_id", 1)
			named := strings.Contains(kinds[kind], `"`+payloadKey+`"`)
			if named != (id != nil) {
				t.Errorf("%s: %s = %v; its payload %s", kind, member, id, kinds[kind])
			}
		}
	}
}

// TestJobFailedOnlyWhenNoRetryRemains: a transient failure that will be retried sends no
// job.failed; the last attempt's failure sends one, as does a permanent failure at once;
// a success sends none, and a worker that lost its lease sends none when it ends.
func TestJobFailedOnlyWhenNoRetryRemains(t *testing.T) {
	e := newJobEnv(t)
	e.svc.Jobs.Register(service.JobKind{Name: "test.flaky", Module: data.ModuleAgents, MaxAttempts: 2,
		Backoff: func(int) time.Duration { return time.Second },
		Handle: func(ctx context.Context, run *service.JobRun) error {
			return service.Transient(errors.New("the provider answered 503"))
		}})
	e.svc.Jobs.Register(service.JobKind{Name: "test.broken", Module: data.ModuleAgents,
		Handle: func(ctx context.Context, run *service.JobRun) error { return errors.New("no transcript") }})
	e.svc.Jobs.Register(service.JobKind{Name: "test.fine", Module: data.ModuleAgents,
		Handle: func(ctx context.Context, run *service.JobRun) error { return nil }})
	flaky := e.enqueue(data.JobEnqueue{Kind: "test.flaky"})
	r := e.runner("r")
	e.runDue(r)
	if got := e.job(flaky.ID); got.Status != data.JobQueued || len(e.jobFailures("ws_1")) != 0 {
		t.Fatalf("after a retried failure: %s and job.failed %+v; want queued and none", got.Status, e.jobFailures("ws_1"))
	}
	e.clock.move(time.Second)
	e.runDue(r)
	broken := e.enqueue(data.JobEnqueue{Kind: "test.broken"})
	e.enqueue(data.JobEnqueue{Kind: "test.fine"})
	e.runDue(r)
	var ids []string
	for _, f := range e.jobFailures("ws_1") {
		ids = append(ids, f.ID)
		if f.Kind == "test.flaky" && (f.LastError == nil || !strings.Contains(*f.LastError, "gave up after 2 attempts")) {
			t.Errorf("the flaky job's job.failed says %v", f.LastError)
		}
	}
	if !slices.Equal(ids, []string{flaky.ID, broken.ID}) {
		t.Errorf("job.failed for %v, want the flaky job's last attempt and the broken job, once each: %v", ids, []string{flaky.ID, broken.ID})
	}

	// A worker that lost its lease: B took the job over and failed it; A's end is not stored
	// and tells nothing.
	started, release := blockingKindFailing(e, "test.taken")
	taken := e.enqueue(data.JobEnqueue{Kind: "test.taken", MaxAttempts: 2})
	a := e.runner("a")
	go e.runDue(a)
	recv(t, started, "a's run")
	e.clock.move(2 * time.Minute) // a's lease (a minute) ended without a heartbeat
	b := e.runner("b")
	go e.runDue(b)
	recv(t, started, "b's run")
	release("b")
	waitFor(t, func() bool { return e.job(taken.ID).Status == data.JobFailed })
	release("a")
	time.Sleep(50 * time.Millisecond) // let a's end be attempted (it must store nothing)
	n := 0
	for _, f := range e.jobFailures("ws_1") {
		if f.ID == taken.ID {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the job taken over: %d job.failed, want 1 (from its holder only)", n)
	}
}

// blockingKindFailing registers a kind whose runs signal started, then fail for good when
// their runner is released.
func blockingKindFailing(e *jobEnv, name string) (started chan *service.JobRun, release func(owner string)) {
	started = make(chan *service.JobRun, 10)
	releases := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	e.svc.Jobs.Register(service.JobKind{Name: name, Module: data.ModuleAgents, MaxAttempts: 2,
		Handle: func(ctx context.Context, run *service.JobRun) error {
			started <- run
			<-releases[run.Job.LeaseOwner]
			return errors.New("refused for good")
		}})
	return started, func(owner string) { close(releases[owner]) }
}

// waitFor waits until cond holds; the wait bounds a hang, it is not a timing assertion.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 30s")
}

// TestJobFailedIsReadAsItsJob: job.failed reaches, on the stream and in the audit log,
// exactly the callers GET /jobs shows its job to (the kind's module and read scope, the
// job's agent); a webhook may carry it only for a caller who reads every job; its
// last_error, as the job's own stored, is scrubbed of the agent's api_key.
func TestJobFailedIsReadAsItsJob(t *testing.T) {
	e := newJobEnv(t)
	u, err := e.svc.Users.CreateUser(context.Background(), data.UserCreate{Name: "Owner", Email: "owner@example.com", Password: "owner-password"})
	if err != nil {
		t.Fatal(err)
	}
	ws, owner := u.PersonalWorkspaceID, testkit.As(u)
	const key = "gsk_live_4f9a8b7c6d5e4f3a2b1c"
	agent := func(name string) string {
		var in data.AgentCreate
		if err := strictjson.Decode([]byte(`{"name":"`+name+`","llm_config":{"provider":"groq","model":"llama-3.3-70b-versatile","api_key":"`+key+`"}}`), &in); err != nil {
			t.Fatal(err)
		}
		a, err := e.svc.Agents.CreateAgent(owner, in)
		if err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	mine, theirs := agent("Mine"), agent("Theirs")
	fail := func(context.Context, *service.JobRun) error {
		return errors.New("401 from the provider: Incorrect API key provided: " + key)
	}
	e.svc.Jobs.Register(service.JobKind{Name: "test.agent_work", Module: data.ModuleAgents, Handle: fail})
	e.svc.Jobs.Register(service.JobKind{Name: "test.kb_work", Module: data.ModuleKnowledgeBase, Handle: func(context.Context, *service.JobRun) error {
		return errors.New("401 from the provider: Incorrect API key provided")
	}})
	mineJob := e.enqueue(data.JobEnqueue{WorkspaceID: ws, Kind: "test.agent_work", AgentID: mine})
	theirsJob := e.enqueue(data.JobEnqueue{WorkspaceID: ws, Kind: "test.agent_work", AgentID: theirs})
	kbJob := e.enqueue(data.JobEnqueue{WorkspaceID: ws, Kind: "test.kb_work"})
	// A job of an agent's kind naming no agent (queued before its kind recorded it) may
	// concern any agent: only callers who see every agent read it.
	e.svc.Jobs.Register(service.JobKind{Name: "test.agent_old", Module: data.ModuleAgents, Handle: func(context.Context, *service.JobRun) error {
		return errors.New("401 from the provider: Incorrect API key provided")
	}})
	noAgentJob := e.enqueue(data.JobEnqueue{WorkspaceID: ws, Kind: "test.agent_old"})
	caller := func(role string, modules, agents, scopes []string) context.Context {
		return data.WithPrincipal(context.Background(), &data.Principal{UserID: u.ID, WorkspaceID: ws, CurrentWorkspaceID: ws,
			Role: role, Modules: modules, AgentIDs: agents, Scopes: scopes})
	}
	all := data.Modules
	cases := []struct {
		name  string
		ctx   context.Context
		reads []string // the jobs whose job.failed it reads
		hooks bool     // may subscribe a webhook to job.failed
	}{
		{"owner", caller(data.RoleOwner, all, nil, nil), []string{mineJob.ID, theirsJob.ID, kbJob.ID, noAgentJob.ID}, true},
		{"member of one agent", caller(data.RoleAdmin, all, []string{mine}, nil), []string{mineJob.ID, kbJob.ID}, false},
		{"member without knowledge bases", caller(data.RoleAdmin, []string{data.ModuleAgents}, nil, nil), []string{mineJob.ID, theirsJob.ID, noAgentJob.ID}, false},
		{"key with agents:read only", caller(data.RoleOwner, all, nil, []string{"agents:read", "webhooks:write"}), []string{mineJob.ID, theirsJob.ID, noAgentJob.ID}, false},
	}
	starts := map[string]string{}
	for _, c := range cases {
		if starts[c.name], err = e.svc.Audit.StreamStart(c.ctx, "", nil); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	e.runDue(e.runner("r"))
	if stored := e.job(mineJob.ID); stored.LastError == nil || strings.Contains(*stored.LastError, key[9:15]) {
		t.Fatalf("the job's own last_error %q; want it stored without the key", deref(stored.LastError))
	}
	for _, c := range cases {
		events, _, err := e.svc.Audit.StreamEvents(c.ctx, starts[c.name], nil, 100)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var streamed []string
		for _, ev := range events {
			if ev.Type != data.EventJobFailed {
				continue
			}
			var f data.JobFailure
			json.Unmarshal(ev.Data, &f)
			streamed = append(streamed, f.ID)
			if f.LastError == nil || strings.Contains(*f.LastError, key[9:15]) || !strings.HasPrefix(*f.LastError, "401 from the provider: Incorrect API key provided") {
				t.Errorf("%s: job.failed's last_error %q; want it without the key", c.name, deref(f.LastError))
			}
		}
		slices.Sort(streamed)
		want := slices.Sorted(slices.Values(c.reads))
		if !slices.Equal(streamed, want) {
			t.Errorf("%s: streamed job.failed of %v, want %v", c.name, streamed, want)
		}
		logged, _, err := e.svc.Audit.ListAuditLog(c.ctx, data.AuditFilter{Type: data.EventJobFailed}, data.PageRequest{PerPage: 100})
		if err != nil || len(logged) != len(want) {
			t.Errorf("%s: the audit log shows %d job.failed, %v; want %d", c.name, len(logged), err, len(want))
		}
		listed, _, err := e.svc.Jobs.ListJobs(c.ctx, data.JobFilter{Status: data.JobFailed}, data.PageRequest{})
		if err != nil || len(listed) != len(want) {
			t.Errorf("%s: GET /jobs lists %d failed jobs, %v; the events must follow it (%d)", c.name, len(listed), err, len(want))
		}
		_, _, err = e.svc.Webhooks.CreateWebhook(c.ctx, data.WebhookCreate{URL: "https://hooks.example.com/in", Events: []string{data.EventJobFailed}})
		if c.hooks != (err == nil) {
			t.Errorf("%s: a webhook of job.failed: %v; want allowed %v", c.name, err, c.hooks)
		}
		if err != nil && data.ErrorCode(err) != data.EFORBIDDEN {
			t.Errorf("%s: a webhook refused with %v, want forbidden", c.name, err)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}
