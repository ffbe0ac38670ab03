package service_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// storedTokens are the ids of u's stored tokens of kind, in id order.
func storedTokens(t *testing.T, e *testkit.Env, u *data.User, kind string) []int64 {
	t.Helper()
	var ids []int64
	if err := e.Store.View(context.Background(), func(tx service.Tx) error {
		keys, err := tx.UserTokens(u.ID, kind)
		for _, k := range keys {
			ids = append(ids, k.ID)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// TestPruneTokens: the token pass deletes login tokens from their expiry on, and API keys
// validate.ExpiredAPIKeyGrace after theirs (listed as expired until then); a token still
// valid, and a key without expiry, stay; a deleted token is refused (401) even by a
// process that had it cached.
func TestPruneTokens(t *testing.T) {
	clock := newSteppedClock()
	const ttl = time.Hour
	e := testkit.New(t, func(o *bolt.Options) { o.Now, o.LoginTTL = clock.now, ttl })
	ctx := context.Background()
	u := e.User(t, "prune@example.com")
	login := func() (*data.APIKey, string) {
		t.Helper()
		k, token, err := e.Svc.Auth.Login(ctx, u.Email, "password-"+u.Email, nil)
		if err != nil {
			t.Fatal(err)
		}
		return k, token
	}
	first, firstToken := login()
	second, _ := login()
	tomorrow := clock.now().Add(24 * time.Hour).Format("2006-01-02")
	expiring, _, err := e.Svc.Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "expiring", Expiration: &tomorrow})
	if err != nil {
		t.Fatal(err)
	}
	forever, _, err := e.Svc.Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "forever"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Svc.Auth.Authenticate(ctx, firstToken); err != nil { // now in the cache
		t.Fatal(err)
	}
	prune := func() int {
		t.Helper()
		n, err := e.Svc.Auth.PruneTokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := prune(); n != 0 {
		t.Errorf("a pass before any expiry deleted %d", n)
	}

	clock.advance(ttl - time.Millisecond)
	third, thirdToken := login()    // valid for another ttl
	clock.advance(time.Millisecond) // the first two expire now
	if n := prune(); n != 2 {
		t.Errorf("the pass at the logins' expiry deleted %d, want 2", n)
	}
	if got, want := storedTokens(t, e, u, data.TokenLogin), []int64{third.ID}; !slices.Equal(got, want) {
		t.Errorf("login tokens after the pass: %v, want %v (not %d, %d)", got, want, first.ID, second.ID)
	}
	if _, err := e.Svc.Auth.Authenticate(ctx, firstToken); data.ErrorCode(err) != data.EUNAUTHORIZED {
		t.Errorf("a deleted token: %v, want %s", err, data.EUNAUTHORIZED)
	}
	if _, err := e.Svc.Auth.Authenticate(ctx, thirdToken); err != nil {
		t.Errorf("a valid token after the pass: %v", err)
	}

	// The expired key is listed (as expired) through its grace, then deleted.
	clock.advance(48 * time.Hour)
	if n := prune(); n != 1 {
		t.Errorf("the pass two days on deleted %d, want 1 (the third login, not the key in its grace)", n)
	}
	if got, want := storedTokens(t, e, u, data.TokenAPIKey), []int64{expiring.ID, forever.ID}; !slices.Equal(got, want) {
		t.Errorf("API keys a day after one expired: %v, want %v", got, want)
	}
	clock.advance(validate.ExpiredAPIKeyGrace)
	if n := prune(); n != 1 {
		t.Errorf("the pass after the grace deleted %d, want 1 (the expired key)", n)
	}
	if got, want := storedTokens(t, e, u, data.TokenAPIKey), []int64{forever.ID}; !slices.Equal(got, want) {
		t.Errorf("API keys after the grace: %v, want %v", got, want)
	}
}

// TestPruneTokensBatches: a backlog larger than a batch goes in several transactions of
// service.TokenPruneBatch, the last one shorter.
func TestPruneTokensBatches(t *testing.T) {
	clock := newSteppedClock()
	e := testkit.New(t, func(o *bolt.Options) { o.Now, o.LoginTTL = clock.now, time.Minute })
	ctx := context.Background()
	u := e.User(t, "batches@example.com")
	const backlog = service.TokenPruneBatch + 3
	if err := e.Store.Update(ctx, func(tx service.Tx) error {
		expires := data.NewTime(clock.now().Add(time.Minute))
		for range backlog {
			k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "login", CreatedAt: data.NewTime(clock.now()), ExpiresAt: &expires},
				UserID: u.ID, WorkspaceID: u.PersonalWorkspaceID, Kind: data.TokenLogin, SecretHash: []byte{1}}
			if err := tx.InsertAPIKey(k); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Minute)
	var passes []int
	for {
		n, err := e.Svc.Auth.PruneTokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		passes = append(passes, n)
		if n < service.TokenPruneBatch {
			break
		}
	}
	if want := []int{service.TokenPruneBatch, 3}; !slices.Equal(passes, want) {
		t.Errorf("passes deleted %v, want %v", passes, want)
	}
	if got := storedTokens(t, e, u, data.TokenLogin); len(got) != 0 {
		t.Errorf("%d login tokens left", len(got))
	}
}
