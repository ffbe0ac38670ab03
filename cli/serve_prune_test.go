package cli

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// serve deletes the login tokens that expired while it was stopped, at start (the
// hourly pass's first run), and keeps a token still valid.
func TestServePrunesExpiredTokensAtStart(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	u, err := NewServices(db).Users.CreateUser(context.Background(), data.UserCreate{Name: "Ada", Email: "ada@example.com", Password: "password-ada"})
	if err != nil {
		t.Fatal(err)
	}
	token := func(expires time.Time) *data.APIKeyRecord {
		at := data.NewTime(expires)
		return &data.APIKeyRecord{APIKey: data.APIKey{Name: "login", CreatedAt: data.NewTime(expires.Add(-time.Hour)), ExpiresAt: &at},
			UserID: u.ID, WorkspaceID: u.PersonalWorkspaceID, Kind: data.TokenLogin, SecretHash: []byte{1}}
	}
	expired, valid := token(time.Now().Add(-time.Minute)), token(time.Now().Add(time.Hour))
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		if err := tx.InsertAPIKey(expired); err != nil {
			return err
		}
		return tx.InsertAPIKey(valid)
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, testServeOptions(t, dir), io.Discard, logs) }()
	eventually(t, "the token pass's log line", func() bool { return strings.Contains(logs.String(), `"msg":"pruned expired tokens","count":1`) })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	db, err = bolt.Open(dir, bolt.Options{PasswordCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(context.Background(), func(tx service.Tx) error {
		gone, err := tx.APIKey(expired.ID)
		if err == nil && gone != nil {
			t.Error("the expired login token is still stored")
		}
		kept, err2 := tx.APIKey(valid.ID)
		if err2 == nil && kept == nil {
			t.Error("the valid login token is gone")
		}
		return errors.Join(err, err2)
	}); err != nil {
		t.Fatal(err)
	}
}
