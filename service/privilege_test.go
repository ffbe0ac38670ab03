package service_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/redact"
	"github.com/voiceapi/voiceapi/service"
)

// watchedStore counts the write transactions in progress, so that a test can tell
// whether something runs inside one.
type watchedStore struct {
	service.Store
	writing atomic.Int32
	// superseded refuses every write as a fenced PostgreSQL replica does; refused counts them.
	superseded atomic.Bool
	refused    atomic.Int32
}

func (w *watchedStore) Update(ctx context.Context, fn func(tx service.Tx) error) error {
	if w.superseded.Load() {
		w.refused.Add(1)
		return fmt.Errorf("%w: as a fenced replica", data.ErrStorageSuperseded)
	}
	w.writing.Add(1)
	defer w.writing.Add(-1)
	return w.Store.Update(ctx, fn)
}

// redactionWorld is two workspaces on one store, each with an agent; A's calls are
// redacted with a card detector and a rule.
type redactionWorld struct {
	svc          *service.Services
	store        *watchedStore
	ctxA, ctxB   context.Context
	wsA, agentA  string
	agentB       string
	usedInUpdate func() bool
}

func newRedactionWorld(t *testing.T) *redactionWorld { return newRedactionWorldWith(t, nil) }

// newRedactionWorldWith is newRedactionWorld with its services' options adjusted by tune
// (may be nil).
func newRedactionWorldWith(t *testing.T, tune func(*service.Options)) *redactionWorld {
	engine := testkit.OpenEngine(t)
	w := &redactionWorld{store: &watchedStore{Store: engine}}
	opts := engine.ServiceOptions()
	if tune != nil {
		tune(&opts)
	}
	svc, err := service.New(w.store, opts)
	if err != nil {
		t.Fatal(err)
	}
	w.svc = svc
	env := &testkit.Env{Store: engine, Svc: svc}
	a, b := env.User(t, "a@example.com"), env.User(t, "b@example.com")
	w.ctxA, w.ctxB, w.wsA = testkit.As(a), testkit.As(b), a.PersonalWorkspaceID
	agent := func(ctx context.Context) string {
		ag, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("x")})
		if err != nil {
			t.Fatal(err)
		}
		return ag.ID
	}
	w.agentA, w.agentB = agent(w.ctxA), agent(w.ctxB)
	red := data.Redaction{Detectors: []string{redact.Card}, Rules: []data.RedactionRule{{Name: "order_id", Pattern: `ORD-\d{6}`}}}
	if _, err := svc.Workspaces.UpdateWorkspace(w.ctxA, w.wsA, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{Redaction: data.Some(red)})}); err != nil {
		t.Fatal(err)
	}
	return w
}

// 23.5: a call is redacted before its write transaction, so no write waits for it: while
// workspace A's call is being redacted (the hook holds it there) no write transaction is
// open, and workspace B's write completes. Were redaction inside A's transaction, the
// hook would see it open, and on bbolt (one writer) B's write would never return.
func TestRedactionHoldsNoWriter(t *testing.T) {
	w := newRedactionWorld(t)
	var redactedA, wroteB int
	service.SetRedactionHook(w.svc, func(ws string) {
		if ws != w.wsA {
			return
		}
		redactedA++
		if n := w.store.writing.Load(); n != 0 {
			t.Errorf("workspace A's call is redacted inside %d write transaction(s)", n)
			return
		}
		if _, err := w.svc.Calls.RegisterCall(w.ctxB, data.CallCreate{AgentID: w.agentB, Direction: data.DirectionWeb}); err != nil {
			t.Errorf("workspace B's write while A's call is redacted: %v", err)
			return
		}
		wroteB++
	})
	secret := []data.TranscriptItem{{Role: "user", Content: "card 4111 1111 1111 1111, order ORD-123456"}}
	c, err := w.svc.Calls.RegisterCall(w.ctxA, data.CallCreate{AgentID: w.agentA, Direction: data.DirectionWeb, Transcript: secret})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Transcript[0].Content; got != "card [card], order [order_id]" {
		t.Errorf("registered transcript %q", got)
	}
	up, err := w.svc.Calls.UpdateCall(w.ctxA, c.ID, data.CallUpdate{Transcript: data.Some(secret), Variables: data.Some(map[string]any{"card": "4111111111111111"})})
	if err != nil {
		t.Fatal(err)
	}
	if up.Transcript[0].Content != "card [card], order [order_id]" || up.Variables["card"] != "[card]" {
		t.Errorf("updated call %+v %+v", up.Transcript, up.Variables)
	}
	if redactedA != 2 || wroteB != 2 {
		t.Errorf("A's calls redacted %d times, B wrote %d times during them; want 2 and 2", redactedA, wroteB)
	}
}

// A setting changed while a call is being redacted (between the read redaction used and
// the write) is noticed in the write transaction: the call is redacted again with the
// new setting, and what is stored is never redacted with the old one alone.
func TestRedactionFollowsASettingChangedMeanwhile(t *testing.T) {
	w := newRedactionWorld(t)
	changed := false
	service.SetRedactionHook(w.svc, func(ws string) {
		if ws != w.wsA || changed {
			return
		}
		changed = true
		red := data.Redaction{Detectors: []string{redact.Card, redact.Email}, Rules: []data.RedactionRule{}}
		if _, err := w.svc.Workspaces.UpdateWorkspace(w.ctxA, w.wsA, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{Redaction: data.Some(red)})}); err != nil {
			t.Error(err)
		}
	})
	c, err := w.svc.Calls.RegisterCall(w.ctxA, data.CallCreate{AgentID: w.agentA, Direction: data.DirectionWeb,
		Transcript: []data.TranscriptItem{{Role: "user", Content: "mail ann@example.com, order ORD-123456"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Transcript[0].Content; got != "mail [email], order ORD-123456" {
		t.Errorf("stored %q, want it redacted with the setting as it was at the write", got)
	}
	stored, _ := w.svc.Calls.Call(w.ctxA, c.ID)
	if stored.Transcript[0].Content != c.Transcript[0].Content {
		t.Errorf("stored %q, answered %q", stored.Transcript[0].Content, c.Transcript[0].Content)
	}
}

// A call whose text times the rules' instructions passes redact.MaxWork is refused before
// any rule runs (422 on the largest member), and nothing is stored; just under it passes.
func TestRedactionWorkIsBounded(t *testing.T) {
	w := newRedactionWorld(t)
	// Rules of exactly redact.MaxRulesProgram instructions (a{n} compiles to n+2).
	var rules []data.RedactionRule
	for i := range 5 {
		rules = append(rules, data.RedactionRule{Name: fmt.Sprintf("r%d", i), Pattern: fmt.Sprintf("Q{%d}", redact.MaxRulesProgram/5-2)})
	}
	red := data.Redaction{Detectors: []string{}, Rules: rules}
	if _, err := w.svc.Workspaces.UpdateWorkspace(w.ctxA, w.wsA, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{Redaction: data.Some(red)})}); err != nil {
		t.Fatal(err)
	}
	limit := redact.MaxWork / redact.MaxRulesProgram // bytes of text the rules may scan
	transcript := func(bytes int) []data.TranscriptItem {
		var items []data.TranscriptItem
		for bytes > 0 {
			n := min(bytes, 10_000)
			items = append(items, data.TranscriptItem{Role: "user", Content: strings.Repeat("x", n)})
			bytes -= n
		}
		return items
	}
	if _, err := w.svc.Calls.RegisterCall(w.ctxA, data.CallCreate{AgentID: w.agentA, Direction: data.DirectionWeb, Transcript: transcript(limit)}); err != nil {
		t.Errorf("a call at the bound: %v", err)
	}
	_, err := w.svc.Calls.RegisterCall(w.ctxA, data.CallCreate{AgentID: w.agentA, Direction: data.DirectionWeb, Transcript: transcript(limit + 1)})
	if fieldsOf(err) != "transcript" {
		t.Errorf("a call one byte past the bound: %v, want 422 on transcript", err)
	}
	list, _, err := w.svc.Calls.ListCalls(w.ctxA, data.CallFilter{}, data.PageRequest{PerPage: 10})
	if err != nil || len(list) != 1 {
		t.Errorf("%d calls stored (%v), want the one at the bound", len(list), err)
	}
}
