package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// callsEnv is a database with one user's workspace and two of its agents, the services
// on it, and a settable clock shared by both.
type callsEnv struct {
	db       cli.Backend
	svc      *service.Services
	now      time.Time
	ws       string
	owner    context.Context // the workspace's owner
	a, b     string          // agents of ws
	otherCtx context.Context // the owner of another workspace
	otherAg  string          // an agent of that other workspace
}

func newCallsEnv(t *testing.T) *callsEnv {
	t.Helper()
	e := &callsEnv{now: time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)}
	clock := func() time.Time { return e.now }
	e.db = testkit.New(t, func(o *bolt.Options) { o.Now = clock }).Store
	e.svc = cli.NewServices(e.db) // on the database's clock and id generator
	e.owner, e.ws = e.user(t, "owner@example.com")
	e.a, e.b = e.agent(t, e.owner, "A"), e.agent(t, e.owner, "B")
	e.otherCtx, _ = e.user(t, "other@example.com")
	e.otherAg = e.agent(t, e.otherCtx, "Elsewhere")
	return e
}

// user creates an account and returns a context acting as the owner of its workspace.
func (e *callsEnv) user(t *testing.T, email string) (context.Context, string) {
	t.Helper()
	u := (&testkit.Env{Store: e.db, Svc: e.svc}).User(t, email)
	return testkit.As(u), u.PersonalWorkspaceID
}

func actingAs(p *data.Principal) context.Context { return data.WithPrincipal(context.Background(), p) }

// limited acts in ws as a member who sees only the given agents.
func (e *callsEnv) limited(agents ...string) context.Context {
	p := *data.PrincipalFrom(e.owner)
	p.Role, p.AgentIDs = data.RoleMember, agents
	return actingAs(&p)
}

func (e *callsEnv) agent(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	a, err := e.svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some(name)})
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// wantCode fails the test unless err carries code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if data.ErrorCode(err) != code {
		t.Fatalf("error = %v, want %s", err, code)
	}
}

// wantFields fails the test unless err is a 422 naming exactly paths.
func wantFields(t *testing.T, err error, paths ...string) {
	t.Helper()
	e, ok := err.(*data.Error)
	if !ok || e.Code != data.EINVALID || len(e.Fields) != len(paths) {
		t.Fatalf("error = %#v, want faults on %v", err, paths)
	}
	for _, p := range paths {
		if len(e.Fields[p]) == 0 {
			t.Fatalf("no fault on %s in %v", p, e.Fields)
		}
	}
}

func TestNumberRulesInTheService(t *testing.T) {
	e := newCallsEnv(t)
	ctx := e.owner
	n, err := e.svc.Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "+15550001", Provider: "sip", InboundAgentID: &e.a})
	if err != nil {
		t.Fatal(err)
	}
	// Registered anywhere is a conflict, also from another workspace.
	_, err = e.svc.Numbers.CreateNumber(e.otherCtx, data.NumberCreate{PhoneNumber: "+15550001", Provider: "twilio"})
	wantCode(t, err, data.ECONFLICT)
	// Bad input names every fault and stores nothing.
	_, err = e.svc.Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "5550002", Provider: "fax"})
	wantFields(t, err, "phone_number", "provider")
	// A binding to another workspace's agent, or to an agent the caller may not see, reads
	// as not an agent of this workspace.
	_, err = e.svc.Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "+15550003", Provider: "sip", OutboundAgentID: &e.otherAg})
	wantFields(t, err, "outbound_agent_id")
	_, err = e.svc.Numbers.CreateNumber(e.limited(e.a), data.NumberCreate{PhoneNumber: "+15550003", Provider: "sip", InboundAgentID: &e.b})
	wantFields(t, err, "inbound_agent_id")
	list, _, err := e.svc.Numbers.ListNumbers(ctx, data.NumberFilter{}, data.PageRequest{})
	if err != nil || len(list) != 1 {
		t.Fatalf("numbers after the refusals = %d, %v", len(list), err)
	}
	// Another workspace's number is not found.
	_, err = e.svc.Numbers.Number(e.otherCtx, n.ID)
	wantCode(t, err, data.ENOTFOUND)
	_, err = e.svc.Numbers.UpdateNumber(e.otherCtx, n.ID, data.NumberUpdate{Nickname: data.Some("x")})
	wantCode(t, err, data.ENOTFOUND)

	// An update with a stale If-Match changes nothing; a null unbinds.
	stale := data.WithIfMatch(ctx, `"stale"`)
	_, err = e.svc.Numbers.UpdateNumber(stale, n.ID, data.NumberUpdate{Nickname: data.Some("desk")})
	wantCode(t, err, data.EPRECONDITION)
	e.now = e.now.Add(time.Minute)
	up, err := e.svc.Numbers.UpdateNumber(ctx, n.ID, data.NumberUpdate{Nickname: data.Some("desk"), InboundAgentID: data.Some[*string](nil), OutboundAgentID: data.Some(&e.b)})
	if err != nil || up.Nickname != "desk" || up.InboundAgentID != nil || *up.OutboundAgentID != e.b || !up.UpdatedAt.Equal(e.now) {
		t.Fatalf("update = %+v, %v", up, err)
	}
	if byB, _, _ := e.svc.Numbers.ListNumbers(ctx, data.NumberFilter{AgentID: e.b}, data.PageRequest{}); len(byB) != 1 {
		t.Errorf("agent B lists %d numbers after the rebinding", len(byB))
	}

	// The numbers limit holds in the create's transaction.
	if _, err := e.svc.Subscriptions.SetSubscription(context.Background(), e.ws, data.SubscriptionSet{Limits: map[string]int64{data.LimitNumbers: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "+15550004", Provider: "sip"})
	wantCode(t, err, data.EQUOTA)

	// Delete frees the phone number for anyone.
	if err := e.svc.Numbers.DeleteNumber(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Numbers.CreateNumber(e.otherCtx, data.NumberCreate{PhoneNumber: "+15550001", Provider: "sip"}); err != nil {
		t.Errorf("a deleted number's phone stays taken: %v", err)
	}
}

func TestNumberDeleteActsInTheTokensWorkspace(t *testing.T) {
	e := newCallsEnv(t)
	n, err := e.svc.Numbers.CreateNumber(e.owner, data.NumberCreate{PhoneNumber: "+15550001", Provider: "sip"})
	if err != nil {
		t.Fatal(err)
	}
	// Acting in the workspace through a token bound to another one: not this workspace's
	// number to delete.
	p := *data.PrincipalFrom(e.owner)
	p.CurrentWorkspaceID = "ws_01JD6ZZZZZZZZZZZZZZZZZZZZZ"
	wantCode(t, e.svc.Numbers.DeleteNumber(actingAs(&p), n.ID), data.ENOTFOUND)
	if _, err := e.svc.Numbers.Number(e.owner, n.ID); err != nil {
		t.Errorf("the refused delete removed the number: %v", err)
	}
}

func TestServicesNeedAWorkspace(t *testing.T) {
	e := newCallsEnv(t)
	_, err := e.svc.Numbers.CreateNumber(context.Background(), data.NumberCreate{PhoneNumber: "+15550001", Provider: "sip"})
	wantCode(t, err, data.EUNAUTHORIZED)
	_, _, err = e.svc.Calls.ListCalls(context.Background(), data.CallFilter{}, data.PageRequest{})
	wantCode(t, err, data.EUNAUTHORIZED)
	_, err = e.svc.Analytics.CallAnalytics(context.Background(), data.CallAnalyticsQuery{})
	wantCode(t, err, data.EUNAUTHORIZED)
}
