package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// Authenticate keeps what it decoded for a token, but a change to the token, its user or
// its membership shows on the very next request, and a wrong secret or an expiry is
// refused even right after a success.
func TestAuthenticateSeesEveryChangeAtOnce(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	e := testkit.New(t, func(o *bolt.Options) { o.Now = func() time.Time { return now } })
	svc := e.Svc
	ctx := context.Background()
	owner := e.User(t, "owner@example.com")
	member := e.User(t, "member@example.com")
	ws := owner.PersonalWorkspaceID
	octx := testkit.As(owner)
	if _, err := svc.WorkspaceUsers.AddWorkspaceUser(octx, ws, data.WorkspaceUserAdd{ID: member.ID, Role: data.RoleDeveloper}); err != nil {
		t.Fatal(err)
	}
	expires := now.Add(48 * time.Hour).Format("2006-01-02")
	_, token, err := svc.Auth.CreateAPIKeyFor(ctx, member.ID, ws, data.APIKeyCreate{Name: "k", Expiration: &expires})
	if err != nil {
		t.Fatal(err)
	}
	// role authenticates twice (the first may fill the cache, the second uses it).
	role := func(step string) string {
		t.Helper()
		var got []string
		for range 2 {
			p, err := svc.Auth.Authenticate(ctx, token)
			switch {
			case err != nil:
				got = append(got, "refused")
			case p.UserID != member.ID || p.WorkspaceID != ws:
				t.Fatalf("%s: principal %+v", step, p)
			default:
				got = append(got, p.Role)
			}
		}
		if got[0] != got[1] {
			t.Fatalf("%s: %s, then %s", step, got[0], got[1])
		}
		return got[0]
	}
	if got := role("added"); got != data.RoleDeveloper {
		t.Fatalf("as added: %s", got)
	}
	if _, err := svc.Auth.Authenticate(ctx, token+"x"); data.ErrorCode(err) != data.EUNAUTHORIZED {
		t.Fatalf("wrong secret after a success: %v", err)
	}
	if _, err := svc.WorkspaceUsers.UpdateWorkspaceUser(octx, ws, member.ID, data.WorkspaceUserUpdate{Role: data.Some(data.RoleMember)}); err != nil {
		t.Fatal(err)
	}
	if got := role("demoted"); got != data.RoleMember {
		t.Fatalf("after the role change: %s", got)
	}
	now = now.Add(72 * time.Hour)
	if got := role("expired"); got != "refused" {
		t.Fatalf("expired token: %s", got)
	}
	now = now.Add(-72 * time.Hour)
	if got := role("clock back"); got != data.RoleMember {
		t.Fatalf("with the clock back: %s", got)
	}
	// Removing a member revokes its tokens in that workspace.
	if err := svc.WorkspaceUsers.RemoveWorkspaceUser(octx, ws, member.ID); err != nil {
		t.Fatal(err)
	}
	if got := role("removed"); got != "refused" {
		t.Fatalf("after removal: %s", got)
	}
}
