package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// openReplicas opens n engines on one database, as n replicas would.
func openReplicas(t *testing.T, n int) []*postgres.DB {
	t.Helper()
	url := pgtest.Database(t)
	var dbs []*postgres.DB
	for range n {
		dbs = append(dbs, testkit.OpenPostgres(t, func(o *postgres.Options) { o.URL = url }))
	}
	return dbs
}

// appendLinked appends one event linked to the workspace's head, as the service's record
// does: EventHead, then AppendEvent, in one write transaction.
func appendLinked(ctx context.Context, db *postgres.DB, ws, id string) error {
	return db.Update(ctx, func(tx service.Tx) error {
		head, err := tx.EventHead(ws)
		if err != nil {
			return err
		}
		e := &data.Event{ID: id, Type: data.EventAgentCreated, WorkspaceID: ws, Data: []byte(`{"n":1}`), PrevHash: head, Hash: "h-" + id}
		return tx.AppendEvent(e)
	})
}

// Writers on three replicas appending to one workspace's chain at once leave one unbroken
// chain: each event links to the one appended before it, in the order ChainEvents gives.
func TestEventChainUnbrokenUnderConcurrentReplicas(t *testing.T) {
	dbs := openReplicas(t, 3)
	ctx := context.Background()
	const writers, each = 30, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := appendLinked(ctx, dbs[w%len(dbs)], "ws_1", fmt.Sprintf("evt_w%d_%02d", w, i)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var prev string
	n := 0
	err := dbs[0].View(ctx, func(tx service.Tx) error {
		return tx.ChainEvents("ws_1", func(id string, e *data.Event, readErr error) error {
			if e == nil || readErr != nil {
				return fmt.Errorf("entry %s: %v", id, readErr)
			}
			if e.PrevHash != prev {
				t.Errorf("event %d (%s) links to %q, want the previous event's hash %q", n, id, e.PrevHash, prev)
			}
			prev, n = e.Hash, n+1
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != writers*each {
		t.Errorf("chain holds %d events, want %d", n, writers*each)
	}
	dbs[1].View(ctx, func(tx service.Tx) error {
		head, _ := tx.EventHead("ws_1")
		if head != prev {
			t.Errorf("head = %q, want the last chained event's hash %q", head, prev)
		}
		return nil
	})
}

// The chain's order is the order of appends (seq), not of ids: replicas' clocks mint ids
// that need not follow the commit order.
func TestEventOrderFollowsAppendsNotIDs(t *testing.T) {
	db := testkit.OpenPostgres(t, nil)
	ctx := context.Background()
	appended := []string{"evt_c", "evt_a", "evt_b"}
	for _, id := range appended {
		if err := appendLinked(ctx, db, "ws_1", id); err != nil {
			t.Fatal(err)
		}
	}
	db.View(ctx, func(tx service.Tx) error {
		var chain, newest []string
		tx.ChainEvents("ws_1", func(id string, _ *data.Event, _ error) error { chain = append(chain, id); return nil })
		tx.EventsNewestFirst("ws_1", func(e *data.Event) (bool, error) { newest = append(newest, e.ID); return true, nil })
		page, _, err := tx.EventPage("ws_1", service.EventFilter{}, data.PageRequest{PerPage: 10})
		if err != nil {
			t.Fatal(err)
		}
		var paged []string
		for _, e := range page {
			paged = append(paged, e.ID)
		}
		reversed := slices.Clone(appended)
		slices.Reverse(reversed)
		if !slices.Equal(chain, appended) || !slices.Equal(newest, reversed) || !slices.Equal(paged, reversed) {
			t.Errorf("chain %v, newest first %v, page %v; want the append order %v (and its reverse)", chain, newest, paged, appended)
		}
		out, _ := tx.Outbox(10)
		if !slices.Equal(out, appended) {
			t.Errorf("outbox = %v, want the append order %v", out, appended)
		}
		return nil
	})
}

// Event pages walk the whole log in both directions: next cursors reach the oldest event,
// prev cursors lead back, and each page is what the same position gave before.
func TestEventPagesRoundTrip(t *testing.T) {
	db := testkit.OpenPostgres(t, nil)
	ctx := context.Background()
	var all []string
	for i := range 7 {
		id := fmt.Sprintf("evt_%02d", i)
		all = append(all, id)
		if err := appendLinked(ctx, db, "ws_1", id); err != nil {
			t.Fatal(err)
		}
	}
	slices.Reverse(all)
	db.View(ctx, func(tx service.Tx) error {
		var pages [][]string
		var cursors []string
		req := data.PageRequest{PerPage: 3}
		for {
			list, pg, err := tx.EventPage("ws_1", service.EventFilter{}, req)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, e := range list {
				ids = append(ids, e.ID)
			}
			pages = append(pages, ids)
			if len(pages) > 1 && pg.PrevCursor == nil {
				t.Errorf("page %d has no prev cursor", len(pages))
			}
			if pg.NextCursor == nil {
				break
			}
			cursors = append(cursors, *pg.NextCursor)
			req.Cursor = *pg.NextCursor
		}
		if got := slices.Concat(pages...); !slices.Equal(got, all) {
			t.Fatalf("pages %v, want %v in pages of 3", pages, all)
		}
		// From the last page, prev cursors give the earlier pages back.
		_, pg, _ := tx.EventPage("ws_1", service.EventFilter{}, data.PageRequest{PerPage: 3, Cursor: cursors[len(cursors)-1]})
		for i := len(pages) - 2; i >= 0; i-- {
			list, p, err := tx.EventPage("ws_1", service.EventFilter{}, data.PageRequest{PerPage: 3, Cursor: *pg.PrevCursor})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, e := range list {
				ids = append(ids, e.ID)
			}
			if !slices.Equal(ids, pages[i]) {
				t.Errorf("back to page %d: %v, want %v", i, ids, pages[i])
			}
			if i > 0 && p.PrevCursor == nil {
				t.Fatalf("page %d read back has no prev cursor", i)
			}
			pg = p
		}
		if pg.PrevCursor != nil {
			t.Errorf("the first page read back has a prev cursor")
		}
		return nil
	})
}
