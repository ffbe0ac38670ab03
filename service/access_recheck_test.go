package service_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// recheckEnv is a workspace with two agents whose owner changes a member's access
// between the member's authentication and its write: what a long request meets when the
// change commits while it runs.
type recheckEnv struct {
	svc    *service.Services
	clock  *movableClock
	logs   *testkit.SyncBuffer
	owner  context.Context
	ws     string
	agents []string
}

// movableClock is a clock a test moves on while services read it.
type movableClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movableClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *movableClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newRecheckEnv(t *testing.T) *recheckEnv {
	t.Helper()
	engine := testkit.OpenEngine(t)
	clock := &movableClock{t: time.Now().UTC()}
	logs := &testkit.SyncBuffer{}
	svc := servicesOn(t, engine, engine, func(o *service.Options) {
		o.Now, o.Logger = clock.now, slog.New(slog.NewJSONHandler(logs, nil))
	})
	u := mustUser(t, svc, "owner@example.com")
	e := &recheckEnv{svc: svc, clock: clock, logs: logs, owner: testkit.As(u), ws: u.PersonalWorkspaceID}
	for _, name := range []string{"First", "Second"} {
		a, err := svc.Agents.CreateAgent(e.owner, data.AgentCreate{Name: data.Some(name)})
		if err != nil {
			t.Fatal(err)
		}
		e.agents = append(e.agents, a.ID)
	}
	return e
}

// member adds a user to the workspace and returns it with an API key bound there.
func (e *recheckEnv) member(t *testing.T, email, role string, modules, agentIDs []string, expiration string) (*data.User, *data.APIKey, string) {
	t.Helper()
	u := mustUser(t, e.svc, email)
	in := data.WorkspaceUserAdd{ID: u.ID, Role: role}
	if modules != nil {
		in.Modules = data.Some(modules)
	}
	if agentIDs != nil {
		in.AgentIDs = data.Some(agentIDs)
	}
	if _, err := e.svc.WorkspaceUsers.AddWorkspaceUser(e.owner, e.ws, in); err != nil {
		t.Fatal(err)
	}
	in2 := data.APIKeyCreate{Name: "long request"}
	if expiration != "" {
		in2.Expiration = &expiration
	}
	key, token, err := e.svc.Auth.CreateAPIKeyFor(context.Background(), u.ID, e.ws, in2)
	if err != nil {
		t.Fatal(err)
	}
	return u, key, token
}

// authenticate is a request's start: the principal its token gives now.
func (e *recheckEnv) authenticate(t *testing.T, token string) context.Context {
	t.Helper()
	p, err := e.svc.Auth.Authenticate(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	return data.WithPrincipal(context.Background(), p)
}

// rename is the request's write: the second agent renamed, under an Idempotency-Key
// whose claim would commit with it.
func (e *recheckEnv) rename(ctx context.Context, claim *data.IdempotencyClaim) error {
	_, err := e.svc.Agents.UpdateAgent(data.WithIdempotencyClaim(ctx, claim), e.agents[1], data.AgentUpdate{Name: data.Some("Renamed")})
	return err
}

// A write re-checks, in its own transaction, the token, user and membership its request
// was authorized with: access revoked or narrowed after authentication refuses it (401
// for a token no longer valid, 403 for narrowed access), and nothing of it commits: not
// the change, not its event, not its Idempotency-Key's claim.
func TestWritesRecheckAccessChangedDuringTheRequest(t *testing.T) {
	cases := []struct {
		name       string
		role       string
		agentIDs   []string
		expiration string
		change     func(t *testing.T, e *recheckEnv, u *data.User, key *data.APIKey)
		want       string
	}{
		{"key revoked", data.RoleDeveloper, nil, "", func(t *testing.T, e *recheckEnv, u *data.User, key *data.APIKey) {
			must(t, e.svc.Auth.RevokeWorkspaceAPIKey(e.owner, e.ws, key.ID))
		}, data.EUNAUTHORIZED},
		{"key expired", data.RoleDeveloper, nil, time.Now().UTC().AddDate(0, 0, 2).Format(time.DateOnly), func(t *testing.T, e *recheckEnv, u *data.User, key *data.APIKey) {
			e.clock.add(72 * time.Hour)
		}, data.EUNAUTHORIZED},
		{"user deleted", data.RoleDeveloper, nil, "", func(t *testing.T, e *recheckEnv, u *data.User, key *data.APIKey) {
			must(t, e.svc.Users.DeleteUser(context.Background(), u.ID))
		}, data.EUNAUTHORIZED},
		{"role lowered", data.RoleDeveloper, nil, "", func(t *testing.T, e *recheckEnv, u *data.User, key *data.APIKey) {
			_, err := e.svc.WorkspaceUsers.UpdateWorkspaceUser(e.owner, e.ws, u.ID, data.WorkspaceUserUpdate{Role: data.Some(data.RoleMember)})
			must(t, err)
		}, data.EFORBIDDEN},
		// Removing a member revokes its tokens bound to the workspace: the token is gone.
		// (A token acting in another workspace meets 403: server's TestLongRequest...)
		{"member removed", data.RoleDeveloper, nil, "", func(t *testing.T, e *recheckEnv, u *data.User, key *data.APIKey) {
			must(t, e.svc.WorkspaceUsers.RemoveWorkspaceUser(e.owner, e.ws, u.ID))
		}, data.EUNAUTHORIZED},
		{"module removed", data.RoleDeveloper, nil, "", func(t *testing.T, e *recheckEnv, u *data.User, key *data.APIKey) {
			_, err := e.svc.WorkspaceUsers.UpdateWorkspaceUser(e.owner, e.ws, u.ID, data.WorkspaceUserUpdate{Modules: data.Some([]string{data.ModuleKnowledgeBase})})
			must(t, err)
		}, data.EFORBIDDEN},
		{"agent_ids narrowed", data.RoleDeveloper, []string{"0", "1"}, "", func(t *testing.T, e *recheckEnv, u *data.User, key *data.APIKey) {
			_, err := e.svc.WorkspaceUsers.UpdateWorkspaceUser(e.owner, e.ws, u.ID, data.WorkspaceUserUpdate{AgentIDs: data.Some([]string{e.agents[0]})})
			must(t, err)
		}, data.EFORBIDDEN},
		{"every agent narrowed to some", data.RoleDeveloper, nil, "", func(t *testing.T, e *recheckEnv, u *data.User, key *data.APIKey) {
			_, err := e.svc.WorkspaceUsers.UpdateWorkspaceUser(e.owner, e.ws, u.ID, data.WorkspaceUserUpdate{AgentIDs: data.Some([]string{e.agents[1]})})
			must(t, err)
		}, data.EFORBIDDEN},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newRecheckEnv(t)
			var agentIDs []string
			for _, i := range c.agentIDs {
				agentIDs = append(agentIDs, e.agents[int(i[0]-'0')])
			}
			u, key, token := e.member(t, "dev@example.com", c.role, nil, agentIDs, c.expiration)
			ctx := e.authenticate(t, token)
			before := workspaceEventCount(t, e)
			c.change(t, e, u, key)
			changed := workspaceEventCount(t, e)
			claim := &data.IdempotencyClaim{ID: "claim-1", TokenID: key.ID, Key: "retry-1", RequestHash: "h", Status: 200}
			wantCode(t, e.rename(ctx, claim), c.want)
			if a, err := e.svc.Agents.Agent(e.owner, e.agents[1]); err != nil || a.Name != "Second" {
				t.Errorf("agent after the refused write = %v, %v; want it unchanged", a, err)
			}
			if n := workspaceEventCount(t, e); n != changed {
				t.Errorf("events: %d before, %d after the change, %d after the refused write", before, changed, n)
			}
			if r, err := e.svc.Idempotency.IdempotentResponse(context.Background(), key.ID, "retry-1"); err != nil || r != nil {
				t.Errorf("claim after the refused write = %+v, %v; want none", r, err)
			}
			// The refusal is logged with what changed and whose, never the token.
			logs := e.logs.String()
			if !strings.Contains(logs, "access changed") || !strings.Contains(logs, `"user_id":"`+u.ID+`"`) || strings.Contains(logs, strings.SplitN(token, "|", 2)[1]) {
				t.Errorf("logs = %s; want the refusal with its user and no secret", logs)
			}
		})
	}
}

// Changes that take nothing away refuse nothing: the request's own profile and password
// changes (the user's revision moves), a module or agents added, an agent of a limited
// member deleted, a key created. Each is followed by the write in a later transaction of
// the same request.
func TestWritesAfterChangesThatTakeNothingAway(t *testing.T) {
	cases := []struct {
		name     string
		agentIDs []string
		change   func(t *testing.T, e *recheckEnv, ctx context.Context, u *data.User)
	}{
		{"own name changed", nil, func(t *testing.T, e *recheckEnv, ctx context.Context, u *data.User) {
			_, err := e.svc.Users.UpdateMe(ctx, data.UserUpdate{Name: data.Some("Renamed Dev")})
			must(t, err)
		}},
		{"own password changed", nil, func(t *testing.T, e *recheckEnv, ctx context.Context, u *data.User) {
			_, err := e.svc.Users.UpdateMe(ctx, data.UserUpdate{Password: data.Some("another-password"), CurrentPassword: data.Some("password123")})
			must(t, err)
		}},
		{"own key created", nil, func(t *testing.T, e *recheckEnv, ctx context.Context, u *data.User) {
			_, _, err := e.svc.Auth.CreateAPIKey(ctx, data.APIKeyCreate{Name: "another"})
			must(t, err)
		}},
		{"role raised", nil, func(t *testing.T, e *recheckEnv, ctx context.Context, u *data.User) {
			_, err := e.svc.WorkspaceUsers.UpdateWorkspaceUser(e.owner, e.ws, u.ID, data.WorkspaceUserUpdate{Role: data.Some(data.RoleAdmin)})
			must(t, err)
		}},
		{"agents widened", []string{"1"}, func(t *testing.T, e *recheckEnv, ctx context.Context, u *data.User) {
			_, err := e.svc.WorkspaceUsers.UpdateWorkspaceUser(e.owner, e.ws, u.ID, data.WorkspaceUserUpdate{AgentIDs: data.Some([]string{})})
			must(t, err)
		}},
		{"another held agent deleted", []string{"0", "1"}, func(t *testing.T, e *recheckEnv, ctx context.Context, u *data.User) {
			must(t, e.svc.Agents.DeleteAgent(e.owner, e.agents[0]))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newRecheckEnv(t)
			var agentIDs []string
			for _, i := range c.agentIDs {
				agentIDs = append(agentIDs, e.agents[int(i[0]-'0')])
			}
			u, key, token := e.member(t, "dev@example.com", data.RoleDeveloper, nil, agentIDs, "")
			ctx := e.authenticate(t, token)
			c.change(t, e, ctx, u)
			claim := &data.IdempotencyClaim{ID: "claim-1", TokenID: key.ID, Key: "retry-1", RequestHash: "h", Status: 200}
			if err := e.rename(ctx, claim); err != nil {
				t.Fatalf("the write after %s: %v", c.name, err)
			}
			if a, err := e.svc.Agents.Agent(e.owner, e.agents[1]); err != nil || a.Name != "Renamed" {
				t.Errorf("agent after the write = %v, %v; want it renamed", a, err)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// workspaceEventCount counts the events of the workspace.
func workspaceEventCount(t *testing.T, e *recheckEnv) int {
	t.Helper()
	n := 0
	req := data.PageRequest{PerPage: 100}
	for {
		list, page, err := e.svc.Audit.ListAuditLog(e.owner, data.AuditFilter{}, req)
		if err != nil {
			t.Fatal(err)
		}
		n += len(list)
		if page.NextCursor == nil {
			return n
		}
		req.Cursor = *page.NextCursor
	}
}
