package bolt

import (
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A kept response that no longer decodes, for a message and for a start, goes with the
// purge together with its entries under its conversation and under the conversation it
// started (which it no longer names); another conversation's entries stay.
func TestUndecodableKeptResponseTakesItsEntries(t *testing.T) {
	db, _, _ := openFile(t)
	defer db.Close()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := db.Update(t.Context(), func(tx service.Tx) error {
		for _, r := range []struct {
			key, conv, start string
			at               time.Time
		}{{"msg", "conv_a", "", t0}, {"start", "", "conv_a", t0}, {"fresh", "", "conv_b", t0.Add(48 * time.Hour)}} {
			if err := tx.PutIdempotentResponse(1, r.key, &data.IdempotentResponse{Status: 201, CreatedAt: data.NewTime(r.at),
				ConversationID: r.conv, StartedConversationID: r.start}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.bolt.Update(func(tx *bbolt.Tx) error {
		for _, key := range []string{"msg", "start"} {
			if err := tx.Bucket(bucketIdempotency).Put(idempotencyKey(1, key), []byte("{not json")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(t.Context(), func(tx service.Tx) error {
		_, err := tx.DeleteIdempotentResponsesBefore(t0.Add(time.Hour), 100)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var byConv, byStart, left int
	if err := db.bolt.View(func(tx *bbolt.Tx) error {
		byConv = tx.Bucket(bucketIdempotencyByConversation).Stats().KeyN
		byStart = tx.Bucket(bucketIdempotencyByStart).Stats().KeyN
		left = tx.Bucket(bucketIdempotency).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if byConv != 0 || byStart != 1 || left != 1 {
		t.Errorf("after the purge: %d responses, %d entries by conversation, %d by started conversation; want 1, 0, 1 (the fresh one's)", left, byConv, byStart)
	}
}
