package storetest

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"idempotency_purge", testIdempotencyPurge})
}

// The purge of kept responses goes oldest first, limit at a time, whatever the order of
// their keys; a response kept again later under its key (a claim replaced by its
// response) is not deleted for the time it was first kept.
func testIdempotencyPurge(t *testing.T, open Opener) {
	s := open(t)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	keys := []string{"e", "d", "c", "b", "a"} // keys in the reverse order of their times
	update(t, s, func(tx service.Tx) error {
		for i, k := range keys {
			if err := tx.PutIdempotentResponse(1, k, &data.IdempotentResponse{Status: 201, CreatedAt: data.NewTime(t0.Add(time.Duration(i) * time.Minute))}); err != nil {
				return err
			}
		}
		// "c" (kept at +2m) is kept again after the cut.
		return tx.PutIdempotentResponse(1, "c", &data.IdempotentResponse{Status: 200, CreatedAt: data.NewTime(t0.Add(time.Hour))})
	})
	kept := func() (out []string) {
		view(t, s, func(tx service.Tx) error {
			for _, k := range keys {
				if r, err := tx.IdempotentResponse(1, k); err != nil || r != nil {
					out = append(out, k)
				}
			}
			return nil
		})
		return out
	}
	cut := t0.Add(4 * time.Minute) // "e" to "b" were kept before it; "a" at it
	purge := func(limit int) int {
		var n int
		update(t, s, func(tx service.Tx) (err error) {
			n, err = tx.DeleteIdempotentResponsesBefore(cut, limit)
			return err
		})
		return n
	}
	if n := purge(2); n != 2 {
		t.Errorf("a purge of 2 deleted %d", n)
	}
	if got := kept(); len(got) != 3 || got[0] != "c" || got[1] != "b" || got[2] != "a" {
		t.Errorf("after the oldest two: %v kept, want [c b a]", got)
	}
	for purge(2) > 0 {
	}
	if got := kept(); len(got) != 2 || got[0] != "c" || got[1] != "a" {
		t.Errorf("after the purge: %v kept, want [c a] (c kept again after the cut, a at it)", got)
	}
	view(t, s, func(tx service.Tx) error {
		if r, err := tx.IdempotentResponse(1, "c"); err != nil || r == nil || r.Status != 200 {
			t.Errorf("the response kept again: %+v, %v", r, err)
		}
		return nil
	})
}
