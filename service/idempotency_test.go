package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// kept reports whether storage still holds the response kept for (token, key), expired
// or not (the service no longer replays an expired one; only the purge removes it).
func kept(t *testing.T, store service.Store, token int64, key string) bool {
	t.Helper()
	var r *data.IdempotentResponse
	if err := store.View(context.Background(), func(tx service.Tx) error {
		var err error
		r, err = tx.IdempotentResponse(token, key)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return r != nil
}

func TestIdempotentResponsesExpireAndArePurged(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	e := testkit.New(t, func(o *bolt.Options) { o.Now = func() time.Time { return now } })
	svc := e.Svc
	ctx := context.Background()
	save := func(token int64, key string) {
		err := svc.Idempotency.SaveIdempotentResponse(ctx, token, key, &data.IdempotentResponse{RequestHash: "h", Status: 201, Body: []byte(`{"token":"1|secret"}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	save(1, "old")
	now = now.Add(23 * time.Hour)
	save(1, "new")
	got, err := svc.Idempotency.IdempotentResponse(ctx, 1, "old")
	if err != nil || got == nil || string(got.Body) != `{"token":"1|secret"}` || got.Status != 201 {
		t.Fatalf("kept response %+v %v", got, err)
	}
	if got, _ := svc.Idempotency.IdempotentResponse(ctx, 2, "old"); got != nil {
		t.Error("a key is shared across tokens")
	}
	now = now.Add(2 * time.Hour) // "old" is 25 h old, "new" 2 h
	if got, _ := svc.Idempotency.IdempotentResponse(ctx, 1, "old"); got != nil {
		t.Error("an expired response is replayed")
	}
	n, err := svc.Idempotency.PurgeIdempotency(ctx)
	if err != nil || n != 1 || kept(t, e.Store, 1, "old") || !kept(t, e.Store, 1, "new") {
		t.Errorf("purged %d (%v); old kept %v, new kept %v", n, err, kept(t, e.Store, 1, "old"), kept(t, e.Store, 1, "new"))
	}
	if got, _ := svc.Idempotency.IdempotentResponse(ctx, 1, "new"); got == nil {
		t.Error("a fresh response was purged")
	}
}

// TestIdempotencyPurgeGoesInBatches: one purge transaction deletes at most
// service.IdempotencyPurgeBatch expired responses, the oldest; the server's pass calls it
// again while it deletes that many (cli's pruneLoop), so none is left after the pass.
func TestIdempotencyPurgeGoesInBatches(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	e := testkit.New(t, func(o *bolt.Options) { o.Now = func() time.Time { return now } })
	ctx := context.Background()
	const expired = 2*service.IdempotencyPurgeBatch + 10
	if err := e.Store.Update(ctx, func(tx service.Tx) error {
		for i := range expired {
			r := &data.IdempotentResponse{Status: 201, CreatedAt: data.NewTime(now.Add(time.Duration(i) * time.Millisecond))}
			if err := tx.PutIdempotentResponse(1, fmt.Sprintf("k%04d", expired-i), r); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(service.IdempotencyTTL + time.Hour)
	n, err := e.Svc.Idempotency.PurgeIdempotency(ctx)
	if err != nil || n != service.IdempotencyPurgeBatch {
		t.Fatalf("one purge deleted %d (%v), want %d", n, err, service.IdempotencyPurgeBatch)
	}
	if kept(t, e.Store, 1, fmt.Sprintf("k%04d", expired)) || !kept(t, e.Store, 1, fmt.Sprintf("k%04d", expired-service.IdempotencyPurgeBatch)) {
		t.Error("the purge did not take the oldest first")
	}
	left := expired - n
	for left > 0 {
		if n, err = e.Svc.Idempotency.PurgeIdempotency(ctx); err != nil || n == 0 || n > service.IdempotencyPurgeBatch {
			t.Fatalf("a purge deleted %d (%v) with %d left", n, err, left)
		}
		left -= n
	}
	if left != 0 || kept(t, e.Store, 1, "k0001") {
		t.Errorf("%d left after the purges", left)
	}
}
