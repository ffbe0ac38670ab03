package cli

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
)

// TestServeSweepsRetention: serve starts the retention sweeper, which deletes a call two
// days old in a workspace keeping calls one day and records retention.swept; cancelling
// serve stops it, and the database closes cleanly.
func TestServeSweepsRetention(t *testing.T) {
	dir := t.TempDir()
	past := time.Now().Add(-48 * time.Hour)
	db, err := bolt.Open(dir, bolt.Options{Now: func() time.Time { return past }, PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	svc := NewServices(db)
	u, err := svc.Users.CreateUser(context.Background(), data.UserCreate{Name: "o", Email: "o@example.com", Password: "password-long-enough", IsAdmin: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := data.WithPrincipal(context.Background(), &data.Principal{UserID: u.ID, WorkspaceID: u.PersonalWorkspaceID, Role: data.RoleOwner, Modules: data.Modules})
	one := 1
	if _, err := svc.Workspaces.UpdateWorkspace(ctx, u.PersonalWorkspaceID, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{RetentionDays: data.Some(&one)})}); err != nil {
		t.Fatal(err)
	}
	a, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("A")})
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.Calls.RegisterCall(ctx, data.CallCreate{AgentID: a.ID, Direction: data.DirectionWeb})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	logs := &syncBuffer{}
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runServe(runCtx, testServeOptions(t, dir, "--retention-interval", "50ms"), io.Discard, logs)
	}()
	eventually(t, "the sweep's log line", func() bool {
		return strings.Contains(logs.String(), `"msg":"retention sweep"`) && strings.Contains(logs.String(), `"calls_deleted":1`)
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}

	db, err = bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc = NewServices(db)
	if _, err := svc.Calls.Call(ctx, c.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("the expired call: %v, want not_found", err)
	}
	events, _, err := svc.Audit.ListAuditLog(ctx, data.AuditFilter{Type: data.EventRetentionSwept}, data.PageRequest{PerPage: 10})
	if err != nil || len(events) != 1 || !strings.Contains(string(events[0].Data), `"calls_deleted":1`) {
		t.Errorf("retention.swept events: %v, %v", events, err)
	}
}

// TestServeRefusesNegativeRetentionInterval names the flag.
func TestServeRefusesNegativeRetentionInterval(t *testing.T) {
	err := runServe(context.Background(), testServeOptions(t, t.TempDir(), "--retention-interval", "-1s"), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--retention-interval") {
		t.Fatalf("got %v", err)
	}
}
