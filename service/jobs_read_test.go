package service_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// TestJobReadFollowsModuleScopeAndAgents: a job is read by callers of its workspace who
// hold its kind's module (and read scope) and may see its agent; for anyone else it does
// not exist, whether asked for by id or listed: both routes apply the one rule.
func TestJobReadFollowsModuleScopeAndAgents(t *testing.T) {
	e := newJobEnv(t)
	noop := func(context.Context, *service.JobRun) error { return nil }
	e.svc.Jobs.Register(service.JobKind{Name: "test.agent_work", Module: data.ModuleAgents, Handle: noop})
	e.svc.Jobs.Register(service.JobKind{Name: "test.kb_work", Module: data.ModuleKnowledgeBase, Handle: noop})
	j := e.enqueue(data.JobEnqueue{WorkspaceID: "ws_1", Kind: "test.agent_work", AgentID: "agt_1"})
	kb := e.enqueue(data.JobEnqueue{WorkspaceID: "ws_1", Kind: "test.kb_work"})
	caller := func(ws, role string, modules, agents, scopes []string) context.Context {
		return data.WithPrincipal(context.Background(), &data.Principal{UserID: "usr_1", WorkspaceID: ws, CurrentWorkspaceID: ws,
			Role: role, Modules: modules, AgentIDs: agents, Scopes: scopes})
	}
	all := data.Modules
	cases := []struct {
		name   string
		ctx    context.Context
		want   bool     // reads j, the agent's job
		listed []string // what its list shows
	}{
		{"owner", caller("ws_1", data.RoleOwner, all, nil, nil), true, []string{kb.ID, j.ID}},
		{"member of every agent", caller("ws_1", data.RoleMember, []string{data.ModuleAgents}, nil, nil), true, []string{j.ID}},
		{"member of its agent", caller("ws_1", data.RoleMember, []string{data.ModuleAgents}, []string{"agt_1"}, nil), true, []string{j.ID}},
		{"member of another agent", caller("ws_1", data.RoleDeveloper, []string{data.ModuleAgents}, []string{"agt_2"}, nil), false, nil},
		{"another agent's member with knowledge bases", caller("ws_1", data.RoleDeveloper, all, []string{"agt_2"}, nil), false, []string{kb.ID}},
		{"member without the module", caller("ws_1", data.RoleDeveloper, []string{data.ModuleKnowledgeBase}, nil, nil), false, []string{kb.ID}},
		{"key with agents:read", caller("ws_1", data.RoleOwner, all, nil, []string{"agents:read"}), true, []string{j.ID}},
		{"key with knowledge_base:write", caller("ws_1", data.RoleOwner, all, nil, []string{"knowledge_base:write"}), false, []string{kb.ID}},
		{"owner of another workspace", caller("ws_2", data.RoleOwner, all, nil, nil), false, nil},
	}
	for _, c := range cases {
		got, err := e.svc.Jobs.Job(c.ctx, j.ID)
		switch {
		case c.want && (err != nil || got.ID != j.ID || got.AgentID == nil || *got.AgentID != "agt_1"):
			t.Errorf("%s: %+v, %v; want the job", c.name, got, err)
		case !c.want && data.ErrorCode(err) != data.ENOTFOUND:
			t.Errorf("%s: %+v, %v; want not_found", c.name, got, err)
		}
		list, _, err := e.svc.Jobs.ListJobs(c.ctx, data.JobFilter{}, data.PageRequest{})
		var ids []string
		for _, l := range list {
			ids = append(ids, l.ID)
		}
		if err != nil || !slices.Equal(ids, c.listed) {
			t.Errorf("%s: listed %v, %v; want %v", c.name, ids, err, c.listed)
		}
		// Asking for the hidden agent's jobs by name shows nothing either.
		if list, _, err := e.svc.Jobs.ListJobs(c.ctx, data.JobFilter{AgentID: "agt_1"}, data.PageRequest{}); err != nil || len(list) > 0 != c.want {
			t.Errorf("%s: agent_id=agt_1 listed %d, %v; want the job %v", c.name, len(list), err, c.want)
		}
	}
}

// TestListJobsRefusesBadFilters: an unknown kind and a range that ends before it starts
// are 422 on their parameters, together with the faults the server found reading the
// query; a kind of the right form that nobody registered is unknown too.
func TestListJobsRefusesBadFilters(t *testing.T) {
	e := newJobEnv(t)
	e.svc.Jobs.Register(service.JobKind{Name: "test.work", Module: data.ModuleAgents, Handle: func(context.Context, *service.JobRun) error { return nil }})
	owner := data.WithPrincipal(context.Background(), &data.Principal{UserID: "usr_1", WorkspaceID: "ws_1", CurrentWorkspaceID: "ws_1",
		Role: data.RoleOwner, Modules: data.Modules})
	now := e.clock.now()
	_, page, err := e.svc.Jobs.ListJobs(data.WithInputFaults(owner, data.FieldError("status", "bad")),
		data.JobFilter{Kind: "test.other", From: now, To: now.Add(-time.Millisecond)}, data.PageRequest{PerPage: 7})
	wantFields(t, err, "status", "kind", "to")
	if page.PerPage != 7 {
		t.Errorf("the refused page's per_page = %d, want 7", page.PerPage)
	}
	if list, _, err := e.svc.Jobs.ListJobs(owner, data.JobFilter{Kind: "test.work", From: now, To: now.Add(time.Millisecond)}, data.PageRequest{}); err != nil || len(list) != 0 {
		t.Errorf("a registered kind over one millisecond: %v, %v", list, err)
	}
	if _, _, err := e.svc.Jobs.ListJobs(owner, data.JobFilter{}, data.PageRequest{Cursor: "bm90IGEgY3Vyc29y"}); data.ErrorCode(err) != data.EINVALID {
		t.Errorf("a forged cursor: %v; want validation_failed", err)
	}
	if _, _, err := e.svc.Jobs.ListJobs(context.Background(), data.JobFilter{}, data.PageRequest{}); data.ErrorCode(err) != data.EUNAUTHORIZED {
		t.Errorf("no caller: %v; want unauthenticated", err)
	}
}

// TestNewJobKindsAreReadAsTheirRecords: the newest kinds are read by the rule of the
// records they work on (docs/jobs.md). A campaign's delete_recipients job, queued by the
// delete of a campaign past its first batch, is of call_history and of the campaign's
// agent: a caller limited to another agent, or without call history, neither lists nor
// reads it. agent.seal_headers, conversation.redact_ended and
// idempotency.delete_token_answers are of the agents module and of no agent (each works
// over the whole workspace, the last over answers about any agent): a reader of agents who sees every
// agent reads them, one limited to some agents does not (their progress and last_error
// may name any agent, a storage error naming the row it met), and they name no agent.
// Both engines.
func TestNewJobKindsAreReadAsTheirRecords(t *testing.T) {
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	ada := mustUser(t, svc, "ada@example.com")
	ctx := testkit.As(ada)
	first := campaignOfTwo(t, svc, ctx, 1)
	other, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Other")})
	if err != nil {
		t.Fatal(err)
	}
	deletedBigCampaign(t, svc, ctx, first, 1_000_000, service.CampaignDeleteBatch+1)
	jobs := map[string]string{} // kind → its job's id
	for _, kind := range []string{service.JobKindSealHeaders, service.JobKindRedactEnded, service.JobKindDeleteTokenAnswers} {
		if err := engine.Update(context.Background(), func(tx service.Tx) error {
			_, err := svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: ada.PersonalWorkspaceID, Kind: kind, UniqueKey: kind})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	all, _, err := svc.Jobs.ListJobs(ctx, data.JobFilter{}, data.PageRequest{PerPage: data.MaxPerPage})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range all {
		jobs[j.Kind] = j.ID
	}
	deleteJob := jobs[service.JobKindDeleteCampaignRecipients]
	if deleteJob == "" || jobs[service.JobKindSealHeaders] == "" || jobs[service.JobKindRedactEnded] == "" {
		t.Fatalf("the owner lists %v", jobs)
	}
	if j, err := svc.Jobs.Job(ctx, deleteJob); err != nil || j.AgentID == nil || *j.AgentID != first.AgentID {
		t.Fatalf("the delete's job %+v (%v), want it of the campaign's agent %s", j, err, first.AgentID)
	}
	as := func(role string, modules, agents, scopes []string) context.Context {
		return data.WithPrincipal(context.Background(), &data.Principal{UserID: ada.ID, WorkspaceID: ada.PersonalWorkspaceID,
			CurrentWorkspaceID: ada.PersonalWorkspaceID, Role: role, Modules: modules, AgentIDs: agents, Scopes: scopes})
	}
	workspaceWide := []string{service.JobKindSealHeaders, service.JobKindRedactEnded, service.JobKindDeleteTokenAnswers}
	cases := []struct {
		name  string
		ctx   context.Context
		kinds []string // the new kinds' jobs it reads
	}{
		{"owner", ctx, append([]string{service.JobKindDeleteCampaignRecipients}, workspaceWide...)},
		{"developer of the campaign's agent", as(data.RoleDeveloper, data.Modules, []string{first.AgentID}, nil), []string{service.JobKindDeleteCampaignRecipients}},
		{"developer of another agent", as(data.RoleDeveloper, data.Modules, []string{other.ID}, nil), nil},
		{"developer of every agent", as(data.RoleDeveloper, data.Modules, nil, nil), append([]string{service.JobKindDeleteCampaignRecipients}, workspaceWide...)},
		{"member without call_history", as(data.RoleMember, []string{data.ModuleAgents}, nil, nil), workspaceWide},
		{"member without agents", as(data.RoleMember, []string{data.ModuleCallHistory}, nil, nil), []string{service.JobKindDeleteCampaignRecipients}},
		{"owner's key with call_history:read", as(data.RoleOwner, data.Modules, nil, []string{"call_history:read"}), []string{service.JobKindDeleteCampaignRecipients}},
		{"owner's key narrowed to another agent", as(data.RoleOwner, data.Modules, []string{other.ID}, []string{"agents:read", "call_history:read"}), nil},
	}
	for _, c := range cases {
		listed, _, err := svc.Jobs.ListJobs(c.ctx, data.JobFilter{}, data.PageRequest{PerPage: data.MaxPerPage})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for _, j := range listed {
			got = append(got, j.Kind)
			if j.Kind != service.JobKindDeleteCampaignRecipients {
				if raw, _ := json.Marshal(j); j.AgentID != nil || strings.Contains(string(raw), "agt_") {
					t.Errorf("%s: the workspace's %s job names an agent: %s", c.name, j.Kind, raw)
				}
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.kinds))
		if !slices.Equal(got, want) {
			t.Errorf("%s lists %v, want %v", c.name, got, want)
		}
		for kind, id := range jobs {
			_, err := svc.Jobs.Job(c.ctx, id)
			if reads := slices.Contains(c.kinds, kind); reads != (err == nil) || !reads && data.ErrorCode(err) != data.ENOTFOUND {
				t.Errorf("%s reading the %s job: %v, want it read: %v (else not found)", c.name, kind, err, reads)
			}
		}
	}
}

// TestAgentKindJobWithoutAnAgentIsReadOnlyByCallersOfEveryAgent: a campaign.delete_recipients
// job queued before its kind recorded the campaign's agent (bbolt schema 18, PostgreSQL
// migration 0029) names no agent, and its last_error may name another agent's campaign: a
// caller limited to some agents neither lists nor reads it (as an agent's event naming no
// agent, conventions §20), a caller who sees every agent does. A job of a kind whose
// records belong to no agent (a url fetch) stays read by every holder of its module.
// Both engines.
func TestAgentKindJobWithoutAnAgentIsReadOnlyByCallersOfEveryAgent(t *testing.T) {
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	ada := mustUser(t, svc, "ada@example.com")
	ws := ada.PersonalWorkspaceID
	mine, err := svc.Agents.CreateAgent(testkit.As(ada), data.AgentCreate{Name: data.Some("Mine")})
	if err != nil {
		t.Fatal(err)
	}
	var old, fetch *data.JobRecord
	if err := engine.Update(context.Background(), func(tx service.Tx) error {
		if old, err = svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: ws, Kind: service.JobKindDeleteCampaignRecipients,
			Payload: json.RawMessage(`{"campaign_id":"cmp_01JD6000000000000000000001"}`), RunAt: time.Now().Add(time.Hour)}); err != nil {
			return err
		}
		fetch, err = svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: ws, Kind: service.JobKindFetchURL,
			Payload: json.RawMessage(`{"knowledge_base_id":"kb_01JD6000000000000000000001"}`), RunAt: time.Now().Add(time.Hour)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if old.AgentID != nil || fetch.AgentID != nil {
		t.Fatalf("the jobs name agents: %v, %v", old.AgentID, fetch.AgentID)
	}
	as := func(agents, scopes []string) context.Context {
		return data.WithPrincipal(context.Background(), &data.Principal{UserID: ada.ID, WorkspaceID: ws,
			CurrentWorkspaceID: ws, Role: data.RoleDeveloper, Modules: data.Modules, AgentIDs: agents, Scopes: scopes})
	}
	for _, c := range []struct {
		name  string
		ctx   context.Context
		reads []string
	}{
		{"owner", testkit.As(ada), []string{old.ID, fetch.ID}},
		{"developer of every agent", as(nil, nil), []string{old.ID, fetch.ID}},
		{"developer of one agent", as([]string{mine.ID}, nil), []string{fetch.ID}},
		{"key of one agent", as([]string{mine.ID}, []string{"call_history:read", "knowledge_base:read"}), []string{fetch.ID}},
	} {
		for _, f := range []data.JobFilter{{}, {Kind: service.JobKindDeleteCampaignRecipients}, {Status: data.JobQueued}} {
			listed, _, err := svc.Jobs.ListJobs(c.ctx, f, data.PageRequest{PerPage: data.MaxPerPage})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			var got []string
			for _, j := range listed {
				got = append(got, j.ID)
			}
			want := slices.DeleteFunc(slices.Clone(c.reads), func(id string) bool {
				return f.Kind != "" && id != old.ID
			})
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s lists %v under %+v, want %v", c.name, got, f, want)
			}
		}
		for _, id := range []string{old.ID, fetch.ID} {
			_, err := svc.Jobs.Job(c.ctx, id)
			if reads := slices.Contains(c.reads, id); reads != (err == nil) || !reads && data.ErrorCode(err) != data.ENOTFOUND {
				t.Errorf("%s reading %s: %v, want it read: %v (else not found)", c.name, id, err, reads)
			}
		}
	}
}
