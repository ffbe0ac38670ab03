package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A list written by a version that kept no count (schema 6, no count key) is counted
// when the file is opened; from there every add and delete moves the count, a count
// missing anyway is read from the list's index, and the count agrees with the list.
func TestSuppressionCountOfAnOlderFile(t *testing.T) {
	dir := t.TempDir()
	opts := Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32)}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	ctx := context.Background()
	entry := func(i int) *data.Suppression {
		return &data.Suppression{ID: fmt.Sprintf("sup_%03d", i), WorkspaceID: "ws_1", PhoneNumber: fmt.Sprintf("+1415555%04d", i), CreatedAt: data.NewTime(time.Now())}
	}
	count := func(want int) {
		t.Helper()
		err := db.View(ctx, func(tx service.Tx) error {
			n, err := tx.CountSuppressions("ws_1")
			if n != want {
				t.Errorf("CountSuppressions = %d, want %d", n, want)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Update(ctx, func(tx service.Tx) error {
		if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: "ws_1", Name: "W"}}); err != nil {
			return err
		}
		_, err := tx.InsertSuppressions([]*data.Suppression{entry(1), entry(2), entry(3)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	forget := func(version uint64) { // as an older binary left the file
		t.Helper()
		if err := db.bolt.Update(func(b *bbolt.Tx) error {
			if version > 0 {
				if err := b.Bucket(bucketMeta).Put([]byte("schema_version"), binary.BigEndian.AppendUint64(nil, version)); err != nil {
					return err
				}
			}
			return b.Bucket(bucketSuppressionCounts).Delete([]byte("ws_1"))
		}); err != nil {
			t.Fatal(err)
		}
	}
	forget(6)
	db.Close()
	if db, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	if err := db.bolt.View(func(b *bbolt.Tx) error {
		if v := b.Bucket(bucketSuppressionCounts).Get([]byte("ws_1")); len(v) != 8 || binary.BigEndian.Uint64(v) != 3 {
			t.Errorf("the count after the open: %x, want 3", v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	forget(0)
	count(3)
	if err := db.Update(ctx, func(tx service.Tx) error {
		_, err := tx.InsertSuppressions([]*data.Suppression{entry(3), entry(4)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	count(4)
	for _, e := range []*data.Suppression{entry(1), entry(1), entry(99)} { // a second delete and an absent entry move nothing
		if err := db.Update(ctx, func(tx service.Tx) error { return tx.DeleteSuppression(e) }); err != nil {
			t.Fatal(err)
		}
	}
	count(3)
	if err := db.bolt.View(func(b *bbolt.Tx) error {
		if n := scopeCountUpTo(b.Bucket(bucketSuppressionsByWS), "ws_1", -1); n != 3 {
			t.Errorf("the list holds %d entries", n)
		}
		if b.Bucket(bucketSuppressionCounts).Get([]byte("ws_1")) == nil {
			t.Error("the count was not kept")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
