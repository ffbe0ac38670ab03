package service_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestDeleteUserKeepsAdministrators: an instance administrator may not delete their own
// account (another may), and the instance's last administrator is never deleted, not
// even by a caller without a principal (an operator's command). Each refusal is a 422
// on id and deletes nothing; a non-administrator is deleted as before.
func TestDeleteUserKeepsAdministrators(t *testing.T) {
	svc := testkit.Services(t, testkit.OpenEngine(t), nil)
	ctx := context.Background()
	as := func(a *testkit.Account) context.Context {
		p, err := svc.Auth.Authenticate(ctx, a.Token)
		if err != nil {
			t.Fatal(err)
		}
		return data.WithPrincipal(ctx, p)
	}
	const lastAdmin = "The user is the instance's last administrator; make another administrator first."
	refused := func(what string, err error, want string, id string) {
		t.Helper()
		var e *data.Error
		if !errors.As(err, &e) || e.Code != data.EINVALID || !slices.Equal(e.Fields["id"], []string{want}) {
			t.Errorf("%s: %v, want a 422 on id: %q", what, err, want)
		}
		if _, err := svc.Users.User(ctx, id); err != nil {
			t.Errorf("%s: the account is gone after the refusal: %v", what, err)
		}
	}
	ada, bob := testkit.NewAccount(t, svc, "ada@example.com", true), testkit.NewAccount(t, svc, "bob@example.com", true)
	refused("ada deletes her own account", svc.Users.DeleteUser(as(ada), ada.ID), data.OwnAccountKept, ada.ID)
	if err := svc.Users.DeleteUser(as(bob), ada.ID); err != nil {
		t.Fatalf("another administrator deletes ada: %v", err)
	}
	refused("bob deletes his own account", svc.Users.DeleteUser(as(bob), bob.ID), data.OwnAccountKept, bob.ID)
	refused("the last administrator, without a principal", svc.Users.DeleteUser(ctx, bob.ID), lastAdmin, bob.ID)
	carl := testkit.NewAccount(t, svc, "carl@example.com", false)
	if err := svc.Users.DeleteUser(ctx, carl.ID); err != nil {
		t.Errorf("a plain account without a principal: %v", err)
	}
}
