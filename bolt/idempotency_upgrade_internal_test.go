package bolt

import (
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 16 file keeps responses without the index by time, one of them not
// decodable. Opening it (schema 17) indexes them, so the purge in batches deletes the
// expired ones, the undecodable one among them, and keeps the fresh one.
func TestKeptResponsesIndexedByTheUpgrade(t *testing.T) {
	db, dir, opts := openFile(t)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := db.Update(t.Context(), func(tx service.Tx) error {
		for i, key := range []string{"old1", "old2", "fresh"} {
			at := t0.Add(time.Duration(i) * time.Minute)
			if key == "fresh" {
				at = t0.Add(48 * time.Hour)
			}
			if err := tx.PutIdempotentResponse(1, key, &data.IdempotentResponse{Status: 201, CreatedAt: data.NewTime(at)}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.bolt.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketIdempotency).Put(idempotencyKey(1, "broken"), []byte("{not json"))
	}); err != nil {
		t.Fatal(err)
	}
	db = asOlderFile(t, db, dir, opts, 16, bucketIdempotencyByTime)
	defer db.Close()
	n := 0
	for {
		var got int
		if err := db.Update(t.Context(), func(tx service.Tx) (err error) {
			got, err = tx.DeleteIdempotentResponsesBefore(t0.Add(time.Hour), 2)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got == 0 {
			break
		}
		n += got
	}
	var left int
	if err := db.bolt.View(func(tx *bbolt.Tx) error {
		left = tx.Bucket(bucketIdempotency).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 3 || left != 1 {
		t.Errorf("the purge after the upgrade deleted %d, left %d; want 3 (two expired, one undecodable), 1", n, left)
	}
}
