package service_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// hookedStore runs a function once, before the next write transaction begins: a test
// puts another request's commit between a service's read and its write.
type hookedStore struct {
	service.Store
	beforeUpdate atomic.Pointer[func()]
}

func (h *hookedStore) Update(ctx context.Context, fn func(tx service.Tx) error) error {
	if f := h.beforeUpdate.Swap(nil); f != nil {
		(*f)()
	}
	return h.Store.Update(ctx, fn)
}

// A login checks the password against the account as read before the (slow) hash
// comparison, and issues its session in a later write. A password reset committed in
// between ends every login session of the account, so a session issued after it for the
// old password would outlive the reset meant to lock out whoever knew that password:
// the login is refused instead. The hook commits the reset just before the login's write.
func TestLoginRacingAPasswordResetIssuesNoSession(t *testing.T) {
	engine := testkit.OpenEngine(t)
	store := &hookedStore{Store: engine}
	svc, err := service.New(store, engine.ServiceOptions())
	if err != nil {
		t.Fatal(err)
	}
	env := &testkit.Env{Store: engine, Svc: svc}
	env.User(t, "ada@example.com")
	ctx := context.Background()
	fresh := strings.Repeat("y", validate.MinPasswordLen)
	reset := func() {
		if _, err := svc.Users.ResetPassword(ctx, "ada@example.com", fresh); err != nil {
			t.Errorf("the reset: %v", err)
		}
	}
	store.beforeUpdate.Store(&reset)
	_, token, err := svc.Auth.Login(ctx, "ada@example.com", "password-ada@example.com", nil)
	if store.beforeUpdate.Load() != nil {
		t.Fatal("the login wrote nothing: the interleaving was not forced")
	}
	if data.ErrorCode(err) != data.EINVALID {
		t.Errorf("a login with the password a reset replaced meanwhile = %v, want refused (validation_failed)", err)
	}
	if token != "" {
		if _, err := svc.Auth.Authenticate(ctx, token); err == nil {
			t.Error("the session issued for the old password outlives the reset")
		}
	}
	if _, _, err := svc.Auth.Login(ctx, "ada@example.com", fresh, nil); err != nil {
		t.Errorf("the new password: %v", err)
	}
}
