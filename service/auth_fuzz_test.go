package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// FuzzAuthenticate: Authenticate never panics, refuses with unauthenticated, and accepts
// only the exact token string it issued and has not revoked or seen expire. In the input,
// {live}, {revoked}, {expired}, {id} and {secret} stand for the tokens issued at setup
// (they are random), so the fuzzer can mutate around real tokens.
func FuzzAuthenticate(f *testing.F) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	e := testkit.New(f, func(o *bolt.Options) { o.Now = func() time.Time { return now } })
	ctx := context.Background()
	u := e.User(f, "fuzz@example.com")
	issue := func(exp *string) (*data.APIKey, string) {
		k, tok, err := e.Svc.Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "k", Expiration: exp})
		if err != nil {
			f.Fatal(err)
		}
		return k, tok
	}
	_, live := issue(nil)
	revokedKey, revoked := issue(nil)
	tomorrow := "2026-11-22"
	_, expired := issue(&tomorrow)
	owner := data.WithPrincipal(ctx, &data.Principal{UserID: u.ID, WorkspaceID: u.PersonalWorkspaceID, CurrentWorkspaceID: u.PersonalWorkspaceID, Role: data.RoleOwner, Modules: data.Modules})
	if err := e.Svc.Auth.DeleteAPIKey(owner, revokedKey.ID); err != nil {
		f.Fatal(err)
	}
	now = now.Add(48 * time.Hour)
	id, secret, _ := strings.Cut(live, "|")
	expand := strings.NewReplacer("{live}", live, "{revoked}", revoked, "{expired}", expired, "{id}", id, "{secret}", secret)

	for _, s := range []string{"{live}", "{revoked}", "{expired}", "{id}|{secret}", "{id}|{secret}x", "{id}|", "|{secret}", "Bearer {live}", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		token := expand.Replace(in)
		p, err := e.Svc.Auth.Authenticate(ctx, token)
		if err != nil {
			if data.ErrorCode(err) != data.EUNAUTHORIZED {
				t.Fatalf("Authenticate(%q): %v, want unauthenticated", token, err)
			}
			if token == live {
				t.Fatalf("the live token is refused: %v", err)
			}
			return
		}
		if token != live {
			t.Fatalf("Authenticate accepted %q, a string it never issued (the live token is %q)", token, live)
		}
		if p.UserID != u.ID || p.WorkspaceID != u.PersonalWorkspaceID {
			t.Fatalf("the live token authenticates as %+v", p)
		}
	})
}
