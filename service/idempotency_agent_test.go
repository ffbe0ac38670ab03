package service_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// CheckReplayAgent lets a replay through only for an agent of the caller's workspace
// within its agent_ids, as the first request's check did; anything else is the 404 a
// first request gets now, existence never told apart.
func TestCheckReplayAgent(t *testing.T) {
	e := testkit.New(t, nil)
	svc := e.Svc
	ada, bob := e.User(t, "ada@example.com"), e.User(t, "bob@example.com")
	ws := ada.PersonalWorkspaceID
	owner := ownerCtx(ada.ID, ws)
	newAgent := func(ctx context.Context, name string) string {
		a, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some(name)})
		if err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	front, sales := newAgent(owner, "Front desk"), newAgent(owner, "Sales")
	elsewhere := newAgent(ownerCtx(bob.ID, bob.PersonalWorkspaceID), "Another workspace's")
	gone := newAgent(owner, "Deleted")
	if err := svc.Agents.DeleteAgent(owner, gone); err != nil {
		t.Fatal(err)
	}
	narrowed := data.WithPrincipal(context.Background(), &data.Principal{UserID: bob.ID, WorkspaceID: ws, CurrentWorkspaceID: ws,
		Role: data.RoleDeveloper, Modules: data.Modules, AgentIDs: []string{front}})
	for _, c := range []struct {
		name  string
		ctx   context.Context
		agent string
		code  string // "" for allowed
	}{
		{"the owner, an agent of the workspace", owner, sales, ""},
		{"a member, an agent within its agent_ids", narrowed, front, ""},
		{"a member, an agent outside its agent_ids", narrowed, sales, data.ENOTFOUND},
		{"an agent of another workspace", owner, elsewhere, data.ENOTFOUND},
		{"an agent deleted since", owner, gone, data.ENOTFOUND},
		{"no workspace to act in", context.Background(), front, data.EUNAUTHORIZED},
	} {
		err := svc.Idempotency.CheckReplayAgent(c.ctx, c.agent)
		if got := data.ErrorCode(err); c.code == "" && err != nil || c.code != "" && got != c.code {
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
		}
	}
}
