package service_test

import (
	"context"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// last_used_at is kept in memory and flushed every few seconds and on Close: after a
// reopen the key shows when it was used, and an unused key shows null.
func TestAPIKeyLastUsedAtSurvivesClose(t *testing.T) {
	dir := t.TempDir()
	opts := bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32)}
	db, err := bolt.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	svc := cli.NewServices(db)
	u := (&testkit.Env{DB: db, Svc: svc}).User(t, "a@example.com")
	used, token, err := svc.Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "used"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "unused"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Auth.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = bolt.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	keys, _, err := cli.NewServices(db).Auth.ListAPIKeys(testkit.As(u), data.PageRequest{})
	if err != nil || len(keys) != 2 {
		t.Fatalf("%v %v", keys, err)
	}
	for _, k := range keys {
		switch {
		case k.ID == used.ID && (k.LastUsedAt == nil || time.Since(k.LastUsedAt.Time) > time.Minute):
			t.Errorf("used key: last_used_at = %v", k.LastUsedAt)
		case k.ID != used.ID && k.LastUsedAt != nil:
			t.Errorf("unused key: last_used_at = %v", k.LastUsedAt)
		}
	}
}

// Expiry follows the injected clock: a token is refused from its expires_at on.
func TestTokenExpiryUsesClock(t *testing.T) {
	now := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	e := testkit.New(t, func(o *bolt.Options) { o.Now = func() time.Time { return now } })
	svc := e.Svc
	ctx := context.Background()
	u := e.User(t, "a@example.com")
	exp := "2030-05-03"
	key, token, err := svc.Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "k", Expiration: &exp})
	if err != nil {
		t.Fatal(err)
	}
	if got := key.ExpiresAt.Format(time.RFC3339); got != "2030-05-03T00:00:00Z" {
		t.Errorf("expires_at %s", got)
	}
	past := "2030-05-01"
	if _, _, err := svc.Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "k", Expiration: &past}); data.ErrorCode(err) != data.EINVALID {
		t.Errorf("today as expiration: %v", err)
	}
	for _, c := range []struct {
		at time.Time
		ok bool
	}{
		{time.Date(2030, 5, 2, 23, 59, 59, 0, time.UTC), true},
		{time.Date(2030, 5, 3, 0, 0, 0, 0, time.UTC), false},
		{time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC), false},
	} {
		now = c.at
		_, err := svc.Auth.Authenticate(ctx, token)
		if (err == nil) != c.ok {
			t.Errorf("at %v: %v", c.at, err)
		}
		if err != nil && data.ErrorCode(err) != data.EUNAUTHORIZED {
			t.Errorf("at %v: code %s", c.at, data.ErrorCode(err))
		}
	}
}
