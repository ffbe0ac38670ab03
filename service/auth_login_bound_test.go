package service_test

import (
	"context"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// loginTokens returns the ids of the user's stored login tokens, oldest first.
func loginTokens(t *testing.T, s service.Store, userID string) []int64 {
	t.Helper()
	var ids []int64
	if err := s.View(context.Background(), func(tx service.Tx) error {
		keys, err := tx.UserTokens(userID, data.TokenLogin)
		for _, k := range keys {
			ids = append(ids, k.ID)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestLoginTokensBounded: a user holds at most validate.MaxLoginTokens login tokens. The
// login at the bound succeeds and deletes the oldest, which is 401 at once (the auth
// cache held it); the others and API keys stay. Logins racing at the bound keep no more
// than it (both engines: VOICEAPI_TEST_BACKEND).
func TestLoginTokensBounded(t *testing.T) {
	engine := testkit.OpenEngine(t)
	svc, err := service.New(engine, engine.ServiceOptions())
	if err != nil {
		t.Fatal(err)
	}
	env := &testkit.Env{Store: engine, Svc: svc}
	u := env.User(t, "loop@example.com")
	apiKey := env.Token(t, u, "")
	ctx := context.Background()
	login := func() string {
		t.Helper()
		_, token, err := svc.Auth.Login(ctx, "loop@example.com", "password-loop@example.com", nil)
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	tokens := make([]string, validate.MaxLoginTokens)
	for i := range tokens {
		tokens[i] = login()
	}
	for _, tok := range []string{tokens[0], tokens[1]} { // cached as authenticated
		if _, err := svc.Auth.Authenticate(ctx, tok); err != nil {
			t.Fatalf("a login token within the bound: %v", err)
		}
	}
	held := loginTokens(t, engine, u.ID)
	if len(held) != validate.MaxLoginTokens {
		t.Fatalf("%d login tokens held at the bound, want %d", len(held), validate.MaxLoginTokens)
	}
	newest := login() // one past the bound: succeeds, the oldest goes
	after := loginTokens(t, engine, u.ID)
	if len(after) != validate.MaxLoginTokens || after[0] != held[1] {
		t.Errorf("after a login past the bound: %d held, oldest %d; want %d, %d", len(after), after[0], validate.MaxLoginTokens, held[1])
	}
	if _, err := svc.Auth.Authenticate(ctx, tokens[0]); data.ErrorCode(err) != data.EUNAUTHORIZED {
		t.Errorf("the oldest login token after it was deleted: %v, want 401", err)
	}
	for _, tok := range []string{tokens[1], newest, apiKey} {
		if _, err := svc.Auth.Authenticate(ctx, tok); err != nil {
			t.Errorf("a token the bound keeps: %v", err)
		}
	}

	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				if _, _, err := svc.Auth.Login(ctx, "loop@example.com", "password-loop@example.com", nil); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n := len(loginTokens(t, engine, u.ID)); n != validate.MaxLoginTokens {
		t.Errorf("%d login tokens after racing logins, want %d", n, validate.MaxLoginTokens)
	}
}
