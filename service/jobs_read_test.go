package service_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
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
