package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestServeDeliveryRetentionFlag: the default is documented in --help's text, a negative
// retention is refused before anything opens.
func TestServeDeliveryRetentionFlag(t *testing.T) {
	o := testServeOptions(t, t.TempDir())
	if o.deliveryRetention != 720*time.Hour {
		t.Errorf("default --delivery-retention = %v, want 720h", o.deliveryRetention)
	}
	o = testServeOptions(t, t.TempDir(), "--delivery-retention", "-1s")
	err := runServe(context.Background(), o, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--delivery-retention must be 0") {
		t.Errorf("--delivery-retention -1s: %v", err)
	}
}

// TestServePrunesOldDeliveries: a server started on a directory holding finished delivery
// records older than its retention deletes them in the background, in more than one
// transaction, and keeps the recent and the pending ones.
func TestServePrunesOldDeliveries(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	old := now.Add(-3 * time.Hour)
	made := func(at time.Time, status string) *data.Delivery {
		g := &data.IDGen{Now: func() time.Time { return at }, Rand: rand.Reader}
		d := &data.Delivery{ID: g.New(data.PrefixDelivery), WebhookID: "wh_1", EventID: "evt_x", EventType: data.EventWebhookTest,
			Attempt: 1, Status: status, CreatedAt: data.NewTime(at)}
		if status == data.DeliveryPending {
			next := data.NewTime(now.Add(24 * time.Hour))
			d.NextAttemptAt = &next
		}
		return d
	}
	oldCount := service.DeliveryPruneBatch + 5
	var kept []*data.Delivery
	err = db.Update(context.Background(), func(tx service.Tx) error {
		for i := range oldCount {
			if err := tx.PutDelivery(made(old.Add(time.Duration(i)*time.Millisecond), data.DeliverySucceeded)); err != nil {
				return err
			}
		}
		kept = []*data.Delivery{made(old, data.DeliveryPending), made(now, data.DeliveryFailed)}
		for _, d := range kept {
			if err := tx.PutDelivery(d); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, testServeOptions(t, dir, "--delivery-retention", "1h"), io.Discard, logs)
	}()
	eventually(t, "the pruning log line", func() bool { return strings.Contains(logs.String(), `"msg":"pruned webhook delivery records"`) })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), fmt.Sprintf(`"count":%d,`, oldCount)) {
		t.Errorf("logs do not report %d records pruned:\n%s", oldCount, logs.String())
	}
	db, err = bolt.Open(dir, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(context.Background(), func(tx service.Tx) error {
		list, _, err := tx.Deliveries("wh_1", service.DeliveryFilter{}, data.PageRequest{PerPage: 100})
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0].ID != kept[1].ID || list[1].ID != kept[0].ID {
			t.Errorf("left after the pass: %d records, want the recent and the pending one", len(list))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

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
