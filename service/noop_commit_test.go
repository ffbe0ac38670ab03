package service_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestNoOpUpdatesCommitNothing: an update that changes nothing (docs/api.md) rolls its
// write transaction back rather than committing it, so bbolt writes no page for it (an
// empty commit writes the meta page, and fsyncs). Counted by bbolt's page writes, which
// a real change moves, so the count is seen to measure commits.
func TestNoOpUpdatesCommitNothing(t *testing.T) {
	db := testkit.OpenDB(t, nil)
	svc := testkit.Services(t, db, nil)
	u := testkit.NewAccount(t, svc, "noop@example.com", false)
	ws := u.WorkspaceID
	ctx := data.WithPrincipal(context.Background(), &data.Principal{UserID: u.ID, WorkspaceID: ws, CurrentWorkspaceID: ws, Role: data.RoleOwner, Modules: data.Modules})

	n, err := svc.Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "+33140000009", Provider: "twilio", Nickname: "Paris"})
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := svc.Webhooks.CreateWebhook(ctx, data.WebhookCreate{URL: "https://example.com/hook", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	kb, err := svc.KnowledgeBases.CreateKnowledgeBase(ctx, data.KnowledgeBaseCreate{Name: "Same"})
	if err != nil {
		t.Fatal(err)
	}
	pageWrites := func() int64 { s := db.Bolt().Stats(); return s.TxStats.GetWrite() }

	noops := []struct {
		name   string
		update func() error
	}{
		{"number, empty", func() error { _, err := svc.Numbers.UpdateNumber(ctx, n.ID, data.NumberUpdate{}); return err }},
		{"number, its own nickname", func() error {
			_, err := svc.Numbers.UpdateNumber(ctx, n.ID, data.NumberUpdate{Nickname: data.Some("Paris")})
			return err
		}},
		{"webhook, its own state", func() error {
			_, err := svc.Webhooks.UpdateWebhook(ctx, w.ID, data.WebhookUpdate{Enabled: data.Some(true)})
			return err
		}},
		{"knowledge base, its own name", func() error {
			_, err := svc.KnowledgeBases.UpdateKnowledgeBase(ctx, kb.ID, data.KnowledgeBaseUpdate{Name: data.Some("Same")})
			return err
		}},
		{"workspace, empty", func() error { _, err := svc.Workspaces.UpdateWorkspace(ctx, ws, data.WorkspaceUpdate{}); return err }},
		{"account, its own name", func() error { _, err := svc.Users.UpdateMe(ctx, data.UserUpdate{Name: data.Some("noop")}); return err }},
	}
	for _, c := range noops {
		before := pageWrites()
		if err := c.update(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d := pageWrites() - before; d != 0 {
			t.Errorf("%s: the no-op update wrote %d pages; want none (no commit)", c.name, d)
		}
	}

	before := pageWrites()
	if _, err := svc.Numbers.UpdateNumber(ctx, n.ID, data.NumberUpdate{Nickname: data.Some("Lyon")}); err != nil {
		t.Fatal(err)
	}
	if pageWrites() == before {
		t.Fatal("a real change wrote no page: the count measures nothing")
	}
}
