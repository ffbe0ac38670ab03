package service_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// countingStore is the real store, counting the calls each write transaction deletes: the
// sweep's batches must stay small whatever it has to delete.
type countingStore struct {
	service.Store
	maxDeletes *int
}

func (s countingStore) Update(ctx context.Context, fn func(service.Tx) error) error {
	n := 0
	err := s.Store.Update(ctx, func(tx service.Tx) error {
		n = 0
		return fn(countingTx{tx, &n})
	})
	*s.maxDeletes = max(*s.maxDeletes, n)
	return err
}

type countingTx struct {
	service.Tx
	n *int
}

func (t countingTx) DeleteCall(id string, terms map[string]int) error {
	*t.n++
	return t.Tx.DeleteCall(id, terms)
}

func days(n int) *int { return &n }

// sweptEvents returns the data of the workspace's retention.swept events, oldest first.
func sweptEvents(t *testing.T, e *callsEnv) []data.RetentionSwept {
	t.Helper()
	list, _, err := e.svc.Audit.ListAuditLog(e.owner, data.AuditFilter{Type: data.EventRetentionSwept}, data.PageRequest{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []data.RetentionSwept
	for i := len(list) - 1; i >= 0; i-- {
		var s data.RetentionSwept
		if err := json.Unmarshal(list[i].Data, &s); err != nil {
			t.Fatal(err)
		}
		if list[i].Actor.Type != "system" {
			t.Errorf("actor %+v, want system", list[i].Actor)
		}
		out = append(out, s)
	}
	return out
}

func (e *callsEnv) register(t *testing.T, agentID string) string {
	t.Helper()
	c, err := e.svc.Calls.RegisterCall(e.owner, data.CallCreate{AgentID: agentID, Direction: data.DirectionWeb,
		Transcript: []data.TranscriptItem{{Role: "user", Content: "hello"}}})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

func (e *callsEnv) exists(t *testing.T, id string) bool {
	t.Helper()
	_, err := e.svc.Calls.Call(e.owner, id)
	if err != nil && data.ErrorCode(err) != data.ENOTFOUND {
		t.Fatal(err)
	}
	return err == nil
}

// TestRetentionSweep moves an injected clock past each retention: the workspace's 30 days
// delete agent A's call, agent B's own 90 days keep B's until then, a legal hold keeps a
// call until it is lifted, a fresh call stays, and each sweep that deleted something
// records one retention.swept event with its counts.
func TestRetentionSweep(t *testing.T) {
	e := newCallsEnv(t)
	ctx := e.owner
	if _, err := e.svc.Workspaces.UpdateWorkspace(ctx, e.ws, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{RetentionDays: data.Some(days(30))})}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Agents.UpdateAgent(ctx, e.b, data.AgentUpdate{Privacy: data.Some(data.AgentPrivacyPatch{RetentionDays: data.Some(days(90))})}); err != nil {
		t.Fatal(err)
	}
	oldA, oldB, held := e.register(t, e.a), e.register(t, e.b), e.register(t, e.a)
	if _, err := e.svc.Calls.UpdateCall(ctx, held, data.CallUpdate{LegalHold: data.Some(true)}); err != nil {
		t.Fatal(err)
	}
	other := e.register(t, e.a)
	// Exactly 30 days later nothing is older than 30 days yet.
	e.now = e.now.Add(30 * 24 * time.Hour)
	fresh := e.register(t, e.a)
	if got, err := e.svc.Retention.Sweep(context.Background()); err != nil || len(got) != 0 {
		t.Fatalf("sweep at 30 days = %v, %v", got, err)
	}
	e.now = e.now.Add(time.Millisecond)
	got, err := e.svc.Retention.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := (data.RetentionSwept{CallsDeleted: 2, CallsOnHold: 1}); got[e.ws] != want || len(got) != 1 {
		t.Fatalf("sweep past 30 days = %v, want %v", got, want)
	}
	for id, want := range map[string]bool{oldA: false, other: false, oldB: true, held: true, fresh: true} {
		if e.exists(t, id) != want {
			t.Errorf("call %s exists = %v, want %v", id, !want, want)
		}
	}
	// A held call cannot be deleted by hand either.
	wantCode(t, e.svc.Calls.DeleteCall(ctx, held), data.ECONFLICT)
	// Past 90 days B's call goes; lifting the hold lets the held one go too.
	e.now = e.now.Add(60 * 24 * time.Hour)
	if _, err := e.svc.Calls.UpdateCall(ctx, held, data.CallUpdate{LegalHold: data.Some(false)}); err != nil {
		t.Fatal(err)
	}
	if got, err := e.svc.Retention.Sweep(context.Background()); err != nil || got[e.ws] != (data.RetentionSwept{CallsDeleted: 3}) {
		t.Fatalf("sweep past 90 days = %v, %v", got, err)
	}
	if e.exists(t, oldB) || e.exists(t, held) || e.exists(t, fresh) {
		t.Error("calls past their retention remain")
	}
	// A sweep with nothing to do records nothing.
	if got, err := e.svc.Retention.Sweep(context.Background()); err != nil || len(got) != 0 {
		t.Fatalf("idle sweep = %v, %v", got, err)
	}
	events := sweptEvents(t, e)
	if len(events) != 2 || events[0].CallsDeleted != 2 || events[1].CallsDeleted != 3 {
		t.Errorf("retention.swept events = %+v", events)
	}
	// The other workspace has no retention: its call stays.
	e.now = e.now.Add(-200 * 24 * time.Hour)
	elsewhere, err := e.svc.Calls.RegisterCall(e.otherCtx, data.CallCreate{AgentID: e.otherAg, Direction: data.DirectionWeb})
	if err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(400 * 24 * time.Hour)
	if _, err := e.svc.Retention.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Calls.Call(e.otherCtx, elsewhere.ID); err != nil {
		t.Errorf("a call of a workspace without retention: %v", err)
	}
}

// TestRetentionAgentShorterAndNull: an agent's retention replaces the workspace's in both
// directions (shorter here), and null returns the agent to the workspace's.
func TestRetentionAgentShorterAndNull(t *testing.T) {
	e := newCallsEnv(t)
	ctx := e.owner
	if _, err := e.svc.Agents.UpdateAgent(ctx, e.a, data.AgentUpdate{Privacy: data.Some(data.AgentPrivacyPatch{RetentionDays: data.Some(days(1))})}); err != nil {
		t.Fatal(err)
	}
	a1, b1 := e.register(t, e.a), e.register(t, e.b)
	e.now = e.now.Add(2 * 24 * time.Hour)
	if got, err := e.svc.Retention.Sweep(context.Background()); err != nil || got[e.ws].CallsDeleted != 1 {
		t.Fatalf("sweep = %v, %v", got, err)
	}
	if e.exists(t, a1) || !e.exists(t, b1) {
		t.Error("the agent's one day: its call goes, the other agent's (no retention anywhere) stays")
	}
	a2 := e.register(t, e.a)
	if _, err := e.svc.Agents.UpdateAgent(ctx, e.a, data.AgentUpdate{Privacy: data.Some(data.AgentPrivacyPatch{RetentionDays: data.Some[*int](nil)})}); err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(10 * 24 * time.Hour)
	if got, err := e.svc.Retention.Sweep(context.Background()); err != nil || len(got) != 0 {
		t.Fatalf("sweep after null = %v, %v", got, err)
	}
	if !e.exists(t, a2) {
		t.Error("null retention keeps the call (the workspace keeps forever)")
	}
}

// TestRetentionBatches expires 250 calls: one sweep deletes them all in transactions of at
// most RetentionBatch deletions, and records one event.
func TestRetentionBatches(t *testing.T) {
	e := newCallsEnv(t)
	maxDeletes := 0
	svc, err := service.New(countingStore{Store: e.db, maxDeletes: &maxDeletes}, e.db.ServiceOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Workspaces.UpdateWorkspace(e.owner, e.ws, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{RetentionDays: data.Some(days(1))})}); err != nil {
		t.Fatal(err)
	}
	const n = 250
	for i := 0; i < n; i++ {
		e.now = e.now.Add(time.Second)
		e.register(t, e.a)
	}
	e.now = e.now.Add(48 * time.Hour)
	got, err := svc.Retention.Sweep(context.Background())
	if err != nil || got[e.ws].CallsDeleted != n {
		t.Fatalf("sweep = %v, %v", got, err)
	}
	if maxDeletes > service.RetentionBatch || maxDeletes == 0 {
		t.Errorf("a transaction deleted %d calls, at most %d allowed", maxDeletes, service.RetentionBatch)
	}
	list, _, err := e.svc.Calls.ListCalls(e.owner, data.CallFilter{}, data.PageRequest{PerPage: 10})
	if err != nil || len(list) != 0 {
		t.Errorf("calls left: %d, %v", len(list), err)
	}
	if ev := sweptEvents(t, e); len(ev) != 1 {
		t.Errorf("%d retention.swept events, want 1", len(ev))
	}
}

// TestRetentionKnowledgeFiles: files uploaded before knowledge_retention_days go with their
// chunks; texts and a newer file stay.
func TestRetentionKnowledgeFiles(t *testing.T) {
	e := newCallsEnv(t)
	ctx := e.owner
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "Docs", Texts: []data.TextInput{{Title: "t", Content: "kept text"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.KnowledgeBases.AddSources(ctx, kb.ID, data.SourcesAdd{Files: []data.FileUpload{{Filename: "old.txt", Content: []byte("the old export of customers")}}}); err != nil {
		t.Fatal(err)
	}
	e.now = e.now.Add(20 * 24 * time.Hour)
	if _, err := e.svc.KnowledgeBases.AddSources(ctx, kb.ID, data.SourcesAdd{Files: []data.FileUpload{{Filename: "new.txt", Content: []byte("a newer file")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Workspaces.UpdateWorkspace(ctx, e.ws, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{KnowledgeRetentionDays: data.Some(days(10))})}); err != nil {
		t.Fatal(err)
	}
	got, err := e.svc.Retention.Sweep(context.Background())
	if err != nil || got[e.ws] != (data.RetentionSwept{KnowledgeFilesDeleted: 1}) {
		t.Fatalf("sweep = %v, %v", got, err)
	}
	after, err := e.svc.KnowledgeBases.KnowledgeBase(ctx, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Files) != 1 || after.Files[0].Filename != "new.txt" || len(after.Texts) != 1 {
		t.Errorf("after the sweep: files %+v, texts %+v", after.Files, after.Texts)
	}
	res, err := e.svc.KnowledgeBases.QueryKnowledgeBase(ctx, kb.ID, data.KnowledgeQuery{Query: "old export of customers"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res {
		if strings.Contains(c.Text, "old export") {
			t.Errorf("retrieval still returns the deleted file's chunk")
		}
	}
}
