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
	f := &suppressionFile{dir: t.TempDir(), opts: Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32)}}
	f.open(t)
	defer func() { f.db.Close() }()
	ctx := context.Background()
	if err := f.db.Update(ctx, func(tx service.Tx) error {
		if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: "ws_1", Name: "W"}}); err != nil {
			return err
		}
		_, err := tx.InsertSuppressions([]*data.Suppression{suppressionEntry(1), suppressionEntry(2), suppressionEntry(3)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f.forget(t, 6)
	f.db.Close()
	f.open(t)
	f.checkCountStoredAtOpen(t)
	f.forget(t, 0)
	f.count(t, 3)
	f.checkAddsAndDeletesMoveCount(t)
}

// suppressionFile is a database in dir whose suppression count the test takes away.
type suppressionFile struct {
	dir  string
	opts Options
	db   *DB
}

// open opens the database into f.db.
func (f *suppressionFile) open(t *testing.T) {
	t.Helper()
	db, err := Open(f.dir, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	f.db = db
}

// suppressionEntry is entry i of workspace ws_1's list.
func suppressionEntry(i int) *data.Suppression {
	return &data.Suppression{ID: fmt.Sprintf("sup_%03d", i), WorkspaceID: "ws_1", PhoneNumber: fmt.Sprintf("+1415555%04d", i), CreatedAt: data.NewTime(time.Now())}
}

// count checks CountSuppressions answers want.
func (f *suppressionFile) count(t *testing.T, want int) {
	t.Helper()
	err := f.db.View(context.Background(), func(tx service.Tx) error {
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

// forget deletes ws_1's count, as an older binary left the file, and sets the schema
// version when it is not 0.
func (f *suppressionFile) forget(t *testing.T, version uint64) {
	t.Helper()
	if err := f.db.bolt.Update(func(b *bbolt.Tx) error {
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

// checkCountStoredAtOpen checks the open counted the list and stored the count.
func (f *suppressionFile) checkCountStoredAtOpen(t *testing.T) {
	t.Helper()
	if err := f.db.bolt.View(func(b *bbolt.Tx) error {
		if v := b.Bucket(bucketSuppressionCounts).Get([]byte("ws_1")); len(v) != 8 || binary.BigEndian.Uint64(v) != 3 {
			t.Errorf("the count after the open: %x, want 3", v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// checkAddsAndDeletesMoveCount checks an add (one entry already listed) and deletes
// (a second delete and an absent entry moving nothing) move the count, which agrees
// with the list and is kept.
func (f *suppressionFile) checkAddsAndDeletesMoveCount(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := f.db.Update(ctx, func(tx service.Tx) error {
		_, err := tx.InsertSuppressions([]*data.Suppression{suppressionEntry(3), suppressionEntry(4)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f.count(t, 4)
	for _, e := range []*data.Suppression{suppressionEntry(1), suppressionEntry(1), suppressionEntry(99)} { // a second delete and an absent entry move nothing
		if err := f.db.Update(ctx, func(tx service.Tx) error { return tx.DeleteSuppression(e) }); err != nil {
			t.Fatal(err)
		}
	}
	f.count(t, 3)
	if err := f.db.bolt.View(func(b *bbolt.Tx) error {
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
