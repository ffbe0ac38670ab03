package server

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// TestPageTurns: no more turns than the channel holds are out at once; a request whose
// context ends while it waits gets service_unavailable and takes no turn; a turn given
// back goes to a waiter.
func TestPageTurns(t *testing.T) {
	turns := make(pageTurns, 1)
	release, err := turns.take(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := turns.take(ctx); data.ErrorCode(err) != data.EUNAVAILABLE {
		t.Fatalf("waiting past the deadline: %v, want %s", err, data.EUNAVAILABLE)
	}
	got := make(chan func(), 1)
	go func() {
		r, err := turns.take(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("a second turn was given while the first was out")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	select {
	case r := <-got:
		r()
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter never got the turn given back")
	}
	if len(turns) != 0 {
		t.Errorf("%d turns out after both were given back", len(turns))
	}
}
