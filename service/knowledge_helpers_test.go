package service_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// ownerCtx acts as the owner of workspace ws, as an authenticated request would.
func ownerCtx(userID, ws string) context.Context {
	return data.WithPrincipal(context.Background(), &data.Principal{
		UserID: userID, WorkspaceID: ws, CurrentWorkspaceID: ws, Role: data.RoleOwner, Modules: data.Modules,
	})
}

// servicesOn builds the services on db, sharing its id generator (event ids order the
// audit chain); tune (may be nil) adjusts the options further.
func servicesOn(t testing.TB, store service.Store, db cli.Backend, tune func(*service.Options)) *service.Services {
	return testkit.Services(t, store, func(o *service.Options) {
		o.IDs = db.ServiceOptions().IDs
		if tune != nil {
			tune(o)
		}
	})
}

// mustUser creates a user, with its personal workspace.
func mustUser(t testing.TB, svc *service.Services, email string) *data.User {
	t.Helper()
	u, err := svc.Users.CreateUser(context.Background(), data.UserCreate{Name: "Test " + email, Email: email, Password: "password123"})
	if err != nil {
		t.Fatal(err)
	}
	return u
}
