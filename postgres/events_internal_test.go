package postgres

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Three appends to three workspaces' chains, interleaved so that each inserts its event
// after the previous one's statements and they commit in reverse: every attempt commits.
// With the outbox's foreign key to events (before migration 0021), each append's check
// read the last leaf page of events' primary key, where the next append then inserted
// its event (ids are time-ordered); SSI locks that read by page, so the first append's
// read, the second's insert and read and the third's insert made the second a pivot
// between two conflicts, and one of them failed to serialize and ran again.
func TestAppendsOfSeparateWorkspacesDoNotConflict(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	ids := db.IDs()
	const writers = 3
	var attempts atomic.Int32
	appended := make(chan int)
	var release, done [writers]chan struct{}
	errs := make(chan error, writers)
	for w := range writers {
		release[w], done[w] = make(chan struct{}), make(chan struct{})
	}
	start := func(w int) {
		first := true
		go func() {
			defer close(done[w])
			errs <- db.Update(ctx, func(stx service.Tx) error {
				attempts.Add(1)
				ws := fmt.Sprintf("ws_%d", w)
				e := &data.Event{ID: ids.New(data.PrefixEvent), Type: data.EventAgentUpdated, WorkspaceID: ws,
					CreatedAt: data.NewTime(time.Now()), Hash: "h" + ws}
				if err := stx.AppendEvent(e); err != nil {
					return err
				}
				if first { // a retry runs through: the interleaving is the first attempts'
					first = false
					appended <- w
					<-release[w]
				}
				return nil
			})
		}()
	}
	for w := range writers {
		start(w)
		<-appended
	}
	for w := writers - 1; w >= 0; w-- {
		close(release[w])
		<-done[w]
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := attempts.Load(); n != writers {
		t.Errorf("%d attempts for %d appends of separate workspaces, want one each: an append failed to serialize and ran again", n, writers)
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM outbox o JOIN events e ON e.id = o.event_id`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != writers {
		t.Errorf("%d events in the outbox, want %d", n, writers)
	}
}
