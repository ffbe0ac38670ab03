package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// A password change checks current_password, which is slow on purpose (bcrypt), outside
// its write transaction: inside, every guess held the store's one writer (bbolt) for the
// hash's time, and a token's 300 guesses a minute held it for most of the minute. While
// the check runs, another write goes through. (On PostgreSQL writes of other records
// never waited; the test holds there too.) A change whose current password is right
// still goes through, and a wrong one is still refused.
func TestPasswordChangeChecksTheCurrentOneOutsideTheTransaction(t *testing.T) {
	env := testkit.New(t, nil)
	u := env.User(t, "a@example.com")
	ctx := testkit.As(u)
	var writeErr error
	checked := 0
	service.SetPasswordCompareHook(env.Svc, func([]byte) {
		checked++
		done := make(chan error, 1)
		go func() {
			_, err := env.Svc.Workspaces.CreateWorkspace(ctx, data.WorkspaceCreate{Name: "meanwhile"})
			done <- err
		}()
		select {
		case writeErr = <-done:
		case <-time.After(30 * time.Second): // a deadlock, not a slow machine
			// t.Error, not t.Fatal: the check may run on the store's committing goroutine.
			t.Error("a write waited for the check of current_password: it runs inside the transaction")
		}
	})
	_, err := env.Svc.Users.UpdateMe(ctx, data.UserUpdate{Password: data.Some("a new password"), CurrentPassword: data.Some("not it")})
	if data.ErrorCode(err) != data.EINVALID {
		t.Errorf("a wrong current password: %v, want validation_failed", err)
	}
	if _, err := env.Svc.Users.UpdateMe(ctx, data.UserUpdate{Password: data.Some("a new password"), CurrentPassword: data.Some("password-a@example.com")}); err != nil {
		t.Errorf("the right current password: %v", err)
	}
	if checked != 2 || writeErr != nil {
		t.Errorf("%d checks of current_password, the write beside them: %v", checked, writeErr)
	}
	if _, _, err := env.Svc.Auth.Login(context.Background(), "a@example.com", "a new password", nil); err != nil {
		t.Errorf("login with the new password: %v", err)
	}
}
