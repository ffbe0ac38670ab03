package service_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// publishN publishes the agent n times and returns nothing: versions 1..n.
func publishN(t *testing.T, ctx context.Context, agents *service.AgentService, id string, n int) {
	t.Helper()
	for range n {
		if err := agents.PublishAgent(ctx, id, data.PublishRequest{}); err != nil {
			t.Fatal(err)
		}
	}
}

// versionNumbers lists the agent's version numbers, newest first.
func versionNumbers(t *testing.T, ctx context.Context, agents *service.AgentService, id string) []int {
	t.Helper()
	list, _, err := agents.ListAgentVersions(ctx, id, data.PageRequest{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, v := range list {
		out = append(out, v.VersionNumber)
	}
	return out
}

// TestDeleteAgentVersion: a version nothing runs on is deleted: reading it, restoring it
// and deleting it again are not found, the list no longer holds it, a call made on it
// keeps its number and its analysis figures are still asked for by it, the audit log
// tells it; a rollout naming it is a fault of its field, as for a version never published; and its number is never given again, even when it was
// the newest. Runs on both engines (VOICEAPI_TEST_BACKEND=postgres).
func TestDeleteAgentVersion(t *testing.T) {
	env := testkit.New(t, nil)
	svc := env.Svc
	ctx := owner(t, env, "versions@example.com")
	a := mustAgent(t, ctx, svc.Agents, `{"name":"Versioned"}`)
	publishN(t, ctx, svc.Agents, a.ID, 3)
	one, ended := 1, data.CallEnded
	call, err := svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: a.ID, AgentVersion: &one, Direction: data.DirectionWeb, Status: &ended})
	if err != nil {
		t.Fatal(err)
	}

	if err := svc.Agents.DeleteAgentVersion(ctx, a.ID, 1); err != nil {
		t.Fatalf("deleting version 1, which nothing runs on: %v", err)
	}
	if _, err := svc.Agents.AgentVersion(ctx, a.ID, 1); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("reading the deleted version: %v, want %s", err, data.ENOTFOUND)
	}
	if _, err := svc.Agents.RestoreAgentVersion(ctx, a.ID, 1); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("restoring the deleted version: %v, want %s, as for an unknown one", err, data.ENOTFOUND)
	}
	if err := svc.Agents.DeleteAgentVersion(ctx, a.ID, 1); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("deleting it again: %v, want %s", err, data.ENOTFOUND)
	}
	if err := svc.Agents.DeleteAgentVersion(ctx, a.ID, 99); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("deleting a version never published: %v, want %s", err, data.ENOTFOUND)
	}
	if got := versionNumbers(t, ctx, svc.Agents, a.ID); !slices.Equal(got, []int{3, 2}) {
		t.Errorf("versions after the delete = %v, want [3 2]", got)
	}
	kept, err := svc.Calls.Call(ctx, call.ID)
	if err != nil {
		t.Fatal(err)
	}
	if kept.AgentVersion == nil || *kept.AgentVersion != 1 {
		t.Errorf("the call made on the deleted version shows agent_version %v, want 1", kept.AgentVersion)
	}
	events, _, err := svc.Audit.ListAuditLog(ctx, data.AuditFilter{Type: data.EventAgentVersionDeleted}, data.PageRequest{PerPage: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || !strings.Contains(string(events[0].Data), `"version_number":1`) {
		t.Errorf("audit log of %s = %d events, want one naming version 1", data.EventAgentVersionDeleted, len(events))
	}
	if _, err := svc.Analytics.AnalysisFigures(ctx, data.AnalysisQuery{AgentID: a.ID, Field: data.AnalysisKeySuccessful, Version: &one}); err != nil {
		t.Errorf("analysis figures of the deleted version's calls: %v", err)
	}
	never := 99
	if _, err := svc.Analytics.AnalysisFigures(ctx, data.AnalysisQuery{AgentID: a.ID, Field: data.AnalysisKeySuccessful, Version: &never}); fieldsOf(err) != "agent_version" {
		t.Errorf("analysis figures of a version never published: %v, want a fault of agent_version", err)
	}
	_, err = svc.Rollouts.SetRollout(ctx, a.ID, data.RolloutSet{Variants: []data.RolloutVariantSet{{Version: 1, Weight: 50}, {Version: 3, Weight: 50}}})
	if fieldsOf(err) != "variants.0.version" {
		t.Errorf("a rollout naming the deleted version: %v, want a fault of variants.0.version", err)
	}

	// The newest version, once not live, goes too; the next publish does not take its number.
	if _, err := svc.Agents.RestoreAgentVersion(ctx, a.ID, 2); err != nil {
		t.Fatal(err)
	}
	if err := svc.Agents.DeleteAgentVersion(ctx, a.ID, 3); err != nil {
		t.Fatalf("deleting the newest version, no longer live: %v", err)
	}
	publishN(t, ctx, svc.Agents, a.ID, 1)
	if got := versionNumbers(t, ctx, svc.Agents, a.ID); !slices.Equal(got, []int{4, 2}) {
		t.Errorf("versions after a publish that followed the newest's delete = %v, want [4 2]: a number is never given twice", got)
	}
}

// TestDeleteAgentVersionInUse: a version something runs on is refused (conflict, saying
// what) and stays: the published version, a variant of the rollout (of weight 0 too), a
// version an open call or an active conversation runs on. Once that use ends, it goes.
func TestDeleteAgentVersionInUse(t *testing.T) {
	env := testkit.New(t, nil)
	svc := env.Svc
	svc.Conversations.Configure(service.ConversationOptions{Models: func(data.LLMConfig) (llm.Client, error) { return instantModel{}, nil }})
	ctx := owner(t, env, "inuse@example.com")
	a := mustAgent(t, ctx, svc.Agents, `{"name":"Busy"}`)
	publishN(t, ctx, svc.Agents, a.ID, 6) // 6 is published
	at := func(n int) *int { return &n }

	if _, err := svc.Rollouts.SetRollout(ctx, a.ID, data.RolloutSet{Variants: []data.RolloutVariantSet{{Version: 5, Weight: 100}, {Version: 4, Weight: 0}}}); err != nil {
		t.Fatal(err)
	}
	openCall, err := svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: a.ID, AgentVersion: at(3), Direction: data.DirectionWeb})
	if err != nil {
		t.Fatal(err)
	}
	conv, err := svc.Conversations.StartConversation(ctx, a.ID, data.ConversationStart{Version: data.ConversationVersion{Number: 2}}, data.ConversationObserver{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		version int
		says    string
	}{
		{6, "published version"},
		{5, "rollout"},
		{4, "rollout"},
		{3, openCall.ID},
		{2, conv.ID},
	}
	for _, c := range cases {
		err := svc.Agents.DeleteAgentVersion(ctx, a.ID, c.version)
		if data.ErrorCode(err) != data.ECONFLICT || !strings.Contains(data.ErrorMessage(err), c.says) {
			t.Errorf("deleting version %d: %v, want %s saying %q", c.version, err, data.ECONFLICT, c.says)
		}
		if _, err := svc.Agents.AgentVersion(ctx, a.ID, c.version); err != nil {
			t.Errorf("version %d after the refused delete: %v", c.version, err)
		}
	}

	// Each use ended, each version goes.
	if err := svc.Rollouts.EndRollout(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Calls.UpdateCall(ctx, openCall.ID, data.CallUpdate{Status: data.Some(data.CallEnded)}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Conversations.EndConversation(ctx, conv.ID); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{5, 4, 3, 2} {
		if err := svc.Agents.DeleteAgentVersion(ctx, a.ID, n); err != nil {
			t.Errorf("deleting version %d once its use ended: %v", n, err)
		}
	}
	if got := versionNumbers(t, ctx, svc.Agents, a.ID); !slices.Equal(got, []int{6, 1}) {
		t.Errorf("versions left = %v, want [6 1]", got)
	}
}

// TestDeleteAgentVersionInUseNamesWhatTheCallerReads: the conflict names the call or the
// conversation running on the version only to a caller who may read it (conventions §6,
// §20): a developer without the call_history module, or a key without its read scope, is
// told a call runs on it, not which; a key without conversations:write, not which
// conversation. Who reads them is still told which, so they can end it.
func TestDeleteAgentVersionInUseNamesWhatTheCallerReads(t *testing.T) {
	env := testkit.New(t, nil)
	svc := env.Svc
	svc.Conversations.Configure(service.ConversationOptions{Models: func(data.LLMConfig) (llm.Client, error) { return instantModel{}, nil }})
	u := env.User(t, "named@example.com")
	ctx := testkit.As(u)
	a := mustAgent(t, ctx, svc.Agents, `{"name":"Busy"}`)
	publishN(t, ctx, svc.Agents, a.ID, 3) // 3 is published
	two := 2
	call, err := svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: a.ID, AgentVersion: &two, Direction: data.DirectionWeb})
	if err != nil {
		t.Fatal(err)
	}
	conv, err := svc.Conversations.StartConversation(ctx, a.ID, data.ConversationStart{Version: data.ConversationVersion{Number: 1}}, data.ConversationObserver{})
	if err != nil {
		t.Fatal(err)
	}
	as := func(role string, modules, scopes []string) context.Context {
		return data.WithPrincipal(context.Background(), &data.Principal{UserID: u.ID, WorkspaceID: u.PersonalWorkspaceID,
			CurrentWorkspaceID: u.PersonalWorkspaceID, Role: role, Modules: modules, Scopes: scopes})
	}
	agentsOnly := []string{data.ModuleAgents}
	cases := []struct {
		name                 string
		ctx                  context.Context
		namesCall, namesConv bool
	}{
		{"owner", ctx, true, true},
		{"developer with every module", as(data.RoleDeveloper, data.Modules, nil), true, true},
		{"developer without call_history", as(data.RoleDeveloper, agentsOnly, nil), false, true},
		{"key with agents:write alone", as(data.RoleOwner, data.Modules, []string{"agents:write"}), false, false},
		{"key with agents:write and call_history:read", as(data.RoleOwner, data.Modules, []string{"agents:write", "call_history:read"}), true, false},
		{"key with agents:write and conversations:write", as(data.RoleOwner, data.Modules, []string{"agents:write", data.ScopeConversationsWrite}), false, true},
	}
	for _, c := range cases {
		for _, v := range []struct {
			n      int
			id     string
			named  bool
			anyway string
		}{{2, call.ID, c.namesCall, "a call"}, {1, conv.ID, c.namesConv, "a conversation"}} {
			err := svc.Agents.DeleteAgentVersion(c.ctx, a.ID, v.n)
			msg := data.ErrorMessage(err)
			if data.ErrorCode(err) != data.ECONFLICT || strings.Contains(msg, v.id) != v.named {
				t.Errorf("%s deleting version %d: %v; want %s, naming %s: %v", c.name, v.n, err, data.ECONFLICT, v.id, v.named)
			}
			if !v.named && !strings.Contains(msg, v.anyway) {
				t.Errorf("%s deleting version %d: %q does not say %q runs on it", c.name, v.n, msg, v.anyway)
			}
		}
	}
}

// TestAgentVersionsBound: an agent holds at most validate.MaxVersionsPerAgent versions.
// The publish that makes the last one stores it; of publishes racing for the last place
// exactly one does; past the bound a publish is a conflict naming the bound and the way
// out, and stores nothing (no version, the agent unchanged); a version deleted makes room
// again, the next number going on from the last given.
func TestAgentVersionsBound(t *testing.T) {
	env := testkit.New(t, nil)
	svc := env.Svc
	ctx := owner(t, env, "bound-versions@example.com")
	a := mustAgent(t, ctx, svc.Agents, `{"name":"Prolific"}`)
	publishN(t, ctx, svc.Agents, a.ID, 1)
	// Versions 2 .. bound-1 written straight to storage, in one transaction: a thousand
	// publishes would test nothing more.
	last := validate.MaxVersionsPerAgent - 1
	err := env.Store.Update(t.Context(), func(tx service.Tx) error {
		row, err := tx.Agent(a.ID)
		if err != nil {
			return err
		}
		v, err := tx.AgentVersion(a.ID, 1)
		if err != nil {
			return err
		}
		for n := 2; n <= last; n++ {
			c := *v
			c.VersionNumber = n
			if err := tx.PutAgentVersion(&c); err != nil {
				return err
			}
		}
		next := *row
		next.LastVersion = last
		return tx.PutAgent(&next, row.Status)
	})
	if err != nil {
		t.Fatal(err)
	}

	const racers = 4
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() { errs[i] = svc.Agents.PublishAgent(ctx, a.ID, data.PublishRequest{}) })
	}
	wg.Wait()
	published := 0
	for i, err := range errs {
		switch data.ErrorCode(err) {
		case "":
			published++
		case data.ECONFLICT:
		default:
			t.Errorf("racer %d: %v, want success or %s", i, err, data.ECONFLICT)
		}
	}
	if published != 1 {
		t.Errorf("%d of %d publishes racing for the last place succeeded, want 1", published, racers)
	}
	before, err := svc.Agents.Agent(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	err = svc.Agents.PublishAgent(ctx, a.ID, data.PublishRequest{})
	msg := data.ErrorMessage(err)
	if data.ErrorCode(err) != data.ECONFLICT || !strings.Contains(msg, fmt.Sprint(validate.MaxVersionsPerAgent)) || !strings.Contains(msg, "delete old versions") {
		t.Errorf("a publish past the bound: %v, want %s naming the bound and saying to delete old versions", err, data.ECONFLICT)
	}
	after, err := svc.Agents.Agent(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := countVersions(t, env, a.ID); n != validate.MaxVersionsPerAgent {
		t.Errorf("the agent holds %d versions, want %d", n, validate.MaxVersionsPerAgent)
	}
	if *after.PublishedVersion != *before.PublishedVersion || after.UpdatedAt != before.UpdatedAt {
		t.Errorf("the refused publish changed the agent: published_version %d → %d", *before.PublishedVersion, *after.PublishedVersion)
	}

	if err := svc.Agents.DeleteAgentVersion(ctx, a.ID, 1); err != nil {
		t.Fatal(err)
	}
	if err := svc.Agents.PublishAgent(ctx, a.ID, data.PublishRequest{}); err != nil {
		t.Fatalf("a publish after a delete made room: %v", err)
	}
	now, err := svc.Agents.Agent(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := validate.MaxVersionsPerAgent + 1; *now.PublishedVersion != want {
		t.Errorf("the publish after the delete made version %d, want %d", *now.PublishedVersion, want)
	}
}

// countVersions counts the agent's versions in storage.
func countVersions(t *testing.T, env *testkit.Env, agentID string) int {
	t.Helper()
	var n int
	err := env.Store.View(t.Context(), func(tx service.Tx) error {
		var err error
		n, err = tx.AgentVersionCount(agentID, 1<<30)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAnalysisOfADeletedVersionsCall: a call's analysis job queued before its version was
// deleted (the call had ended: nothing held the version) asks no model and fails, the
// call's analysis_error saying the version was deleted; before, it asked the agent's
// current model for an analysis of nothing.
func TestAnalysisOfADeletedVersionsCall(t *testing.T) {
	e := newAnalysisEnv(t, data.LLMInternal)
	agent := e.agent(fmt.Sprintf(bookingConfig, false))
	c := e.endedCall(agent, "Friday")
	job, err := e.svc.Analysis.AnalyzeCall(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	publishN(t, e.ctx, e.svc.Agents, agent, 1)
	if err := e.svc.Agents.DeleteAgentVersion(e.ctx, agent, 1); err != nil {
		t.Fatalf("deleting the version of an ended call: %v", err)
	}
	e.runDue()
	if j := e.job(job.ID); j.Status != data.JobFailed {
		t.Errorf("the job = %s, want %s", j.Status, data.JobFailed)
	}
	got := e.call(c.ID)
	if got.AnalysisError == nil || !strings.Contains(got.AnalysisError.Message, "deleted") || got.Analysis != nil {
		t.Errorf("the call's analysis %v, error %+v, want no analysis and an error saying its version was deleted", got.Analysis, got.AnalysisError)
	}
}

// TestKnowledgeQueryOfADeletedVersion: call starts keep the versions they run in memory;
// a knowledge query naming a version deleted since is the fault of its agent_version
// field, as for a version never published, rather than an answer from the memory of a
// version that no longer exists (which another replica's delete could not clear).
func TestKnowledgeQueryOfADeletedVersion(t *testing.T) {
	env := testkit.New(t, nil)
	svc := env.Svc
	ctx := owner(t, env, "cache@example.com")
	a := mustAgent(t, ctx, svc.Agents, `{"name":"Cached"}`)
	publishN(t, ctx, svc.Agents, a.ID, 1)
	to, agentID := "+14155550123", a.ID
	started, err := svc.CallStart.StartCall(ctx, data.CallStart{Direction: data.DirectionOutbound, ToNumber: &to, AgentID: &agentID})
	if err != nil {
		t.Fatal(err)
	}
	publishN(t, ctx, svc.Agents, a.ID, 1)
	if _, err := svc.Calls.UpdateCall(ctx, started.Call.ID, data.CallUpdate{Status: data.Some(data.CallEnded)}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Agents.DeleteAgentVersion(ctx, a.ID, 1); err != nil {
		t.Fatal(err)
	}
	one := 1
	_, err = svc.KnowledgeBases.QueryAgentKnowledge(ctx, a.ID, data.AgentKnowledgeQuery{Query: "opening hours", AgentVersion: &one})
	if fieldsOf(err) != "agent_version" {
		t.Errorf("a knowledge query naming the deleted version: %v, want a fault of agent_version", err)
	}
}

// TestVersionDeletedDuringAConversationsOpening: a start checks its version, asks the
// model for the opening outside any transaction, then inserts the conversation; a delete
// of the version meanwhile (no active conversation held it yet) leaves the start refused
// (conflict) and nothing stored, where the conversation was stored on a version that no
// longer existed, each of its turns then not found.
func TestVersionDeletedDuringAConversationsOpening(t *testing.T) {
	w, m := openingWorld(t)
	publishN(t, w.ctxA, w.svc.Agents, w.agentA, 2)
	started := make(chan error, 1)
	go func() {
		_, err := w.svc.Conversations.StartConversation(w.ctxA, w.agentA, data.ConversationStart{Version: data.ConversationVersion{Number: 1}}, data.ConversationObserver{})
		started <- err
	}()
	select {
	case <-m.opening:
	case err := <-started:
		t.Fatalf("the start ended before its opening was asked for: %v", err)
	}
	if err := w.svc.Agents.DeleteAgentVersion(w.ctxA, w.agentA, 1); err != nil {
		t.Fatalf("deleting version 1 during the opening: %v", err)
	}
	close(m.release)
	if err := <-started; data.ErrorCode(err) != data.ECONFLICT || !strings.Contains(data.ErrorMessage(err), "deleted") {
		t.Errorf("the start whose version was deleted during its opening: %v, want %s saying so", err, data.ECONFLICT)
	}
	if got := activeConversations(t, w); len(got) != 0 {
		t.Errorf("active conversations after the refused start: %v, want none", got)
	}
}
