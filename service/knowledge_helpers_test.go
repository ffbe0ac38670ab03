package service_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
)

// ownerCtx acts as the owner of workspace ws, as an authenticated request would.
func ownerCtx(userID, ws string) context.Context {
	return data.WithPrincipal(context.Background(), &data.Principal{
		UserID: userID, WorkspaceID: ws, CurrentWorkspaceID: ws, Role: data.RoleOwner, Modules: data.Modules,
	})
}

// mustUser creates a user, with its personal workspace.
func mustUser(t testing.TB, db *bolt.DB, email string) *data.User {
	t.Helper()
	u, err := db.CreateUser(context.Background(), data.UserCreate{Name: "Test " + email, Email: email, Password: "password123"})
	if err != nil {
		t.Fatal(err)
	}
	return u
}
