package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/validate"
)

// An operator's reset sets a new password without the old one, ends every login session
// of the account (whoever knew the old password may hold one) but keeps its API keys, and
// is audited; a refused reset changes nothing.
func TestResetPasswordEndsLoginsKeepsKeys(t *testing.T) {
	e := testkit.New(t, nil)
	ctx := context.Background()
	u := e.User(t, "ada@example.com")
	_, login, err := e.Svc.Auth.Login(ctx, "ada@example.com", "password-ada@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	key := e.Token(t, u, "")
	e.User(t, "bob@example.com")
	_, otherLogin, err := e.Svc.Auth.Login(ctx, "bob@example.com", "password-bob@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}

	// Refused: too short (at the bound and past it), unknown email. Nothing changes.
	short := strings.Repeat("x", validate.MinPasswordLen-1)
	if _, err := e.Svc.Users.ResetPassword(ctx, "ada@example.com", short); data.ErrorCode(err) != data.EINVALID {
		t.Errorf("a password of %d characters: %v, want validation_failed", len(short), err)
	}
	if _, err := e.Svc.Users.ResetPassword(ctx, "nobody@example.com", "long-enough"); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("an unknown email: %v, want not_found", err)
	}
	if _, err := e.Svc.Auth.Authenticate(ctx, login); err != nil {
		t.Fatalf("a refused reset ended the login: %v", err)
	}

	fresh := strings.Repeat("y", validate.MinPasswordLen)
	got, err := e.Svc.Users.ResetPassword(ctx, " ADA@example.com", fresh)
	if err != nil || got.ID != u.ID {
		t.Fatalf("reset: %+v, %v", got, err)
	}
	if _, _, err := e.Svc.Auth.Login(ctx, "ada@example.com", "password-ada@example.com", nil); err == nil {
		t.Error("the old password still signs in")
	}
	if _, _, err := e.Svc.Auth.Login(ctx, "ada@example.com", fresh, nil); err != nil {
		t.Errorf("the new password: %v", err)
	}
	if _, err := e.Svc.Auth.Authenticate(ctx, login); data.ErrorCode(err) != data.EUNAUTHORIZED {
		t.Errorf("the login session from before the reset: %v, want unauthenticated", err)
	}
	if _, err := e.Svc.Auth.Authenticate(ctx, key); err != nil {
		t.Errorf("the API key after the reset: %v", err)
	}
	if _, err := e.Svc.Auth.Authenticate(ctx, otherLogin); err != nil {
		t.Errorf("another user's session after the reset: %v", err)
	}
	events, _, err := e.Svc.Audit.ListAuditLog(testkit.As(u), data.AuditFilter{Type: data.EventUserPasswordChanged}, data.PageRequest{PerPage: 10})
	if err != nil || len(events) != 1 || events[0].Actor.Type != "system" {
		t.Fatalf("audit of the reset: %+v, %v", events, err)
	}
}
