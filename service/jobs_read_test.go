package service_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestJobReadFollowsModuleScopeAndAgents: a job is read by callers of its workspace who
// hold its kind's module (and read scope) and may see its agent; for anyone else it does
// not exist.
func TestJobReadFollowsModuleScopeAndAgents(t *testing.T) {
	e := newJobEnv(t)
	e.svc.Jobs.Register(service.JobKind{Name: "test.agent_work", Module: data.ModuleAgents, Handle: func(context.Context, *service.JobRun) error { return nil }})
	j := e.enqueue(data.JobEnqueue{WorkspaceID: "ws_1", Kind: "test.agent_work", AgentID: "agt_1"})
	caller := func(ws, role string, modules, agents, scopes []string) context.Context {
		return data.WithPrincipal(context.Background(), &data.Principal{UserID: "usr_1", WorkspaceID: ws, CurrentWorkspaceID: ws,
			Role: role, Modules: modules, AgentIDs: agents, Scopes: scopes})
	}
	all := data.Modules
	cases := []struct {
		name string
		ctx  context.Context
		want bool
	}{
		{"owner", caller("ws_1", data.RoleOwner, all, nil, nil), true},
		{"member of every agent", caller("ws_1", data.RoleMember, []string{data.ModuleAgents}, nil, nil), true},
		{"member of its agent", caller("ws_1", data.RoleMember, []string{data.ModuleAgents}, []string{"agt_1"}, nil), true},
		{"member of another agent", caller("ws_1", data.RoleDeveloper, []string{data.ModuleAgents}, []string{"agt_2"}, nil), false},
		{"member without the module", caller("ws_1", data.RoleDeveloper, []string{data.ModuleKnowledgeBase}, nil, nil), false},
		{"key with agents:read", caller("ws_1", data.RoleOwner, all, nil, []string{"agents:read"}), true},
		{"key with knowledge_base:write", caller("ws_1", data.RoleOwner, all, nil, []string{"knowledge_base:write"}), false},
		{"owner of another workspace", caller("ws_2", data.RoleOwner, all, nil, nil), false},
	}
	for _, c := range cases {
		got, err := e.svc.Jobs.Job(c.ctx, j.ID)
		switch {
		case c.want && (err != nil || got.ID != j.ID || got.AgentID == nil || *got.AgentID != "agt_1"):
			t.Errorf("%s: %+v, %v; want the job", c.name, got, err)
		case !c.want && data.ErrorCode(err) != data.ENOTFOUND:
			t.Errorf("%s: %+v, %v; want not_found", c.name, got, err)
		}
	}
}
