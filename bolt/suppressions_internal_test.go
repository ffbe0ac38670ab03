package bolt

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A list written by a version that kept no count (its count key absent) is counted from
// its index, and the first write keeps its count from there: an add, a delete and the
// count read after them all agree with the list.
func TestSuppressionCountOfAnOlderFile(t *testing.T) {
	db, err := Open(t.TempDir(), Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
		_, err := tx.InsertSuppressions([]*data.Suppression{entry(1), entry(2), entry(3)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.bolt.Update(func(b *bbolt.Tx) error { return b.Bucket(bucketSuppressionCounts).Delete([]byte("ws_1")) }); err != nil {
		t.Fatal(err) // as an older binary left the file
	}
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
