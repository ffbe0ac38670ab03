package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// BenchmarkAppendLinkedEvent is one write transaction of the service's record: the head
// read FOR UPDATE, then the event, head and outbox rows.
func BenchmarkAppendLinkedEvent(b *testing.B) {
	db := testkit.OpenPostgres(b, nil)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if err := appendLinked(ctx, db, "ws_1", fmt.Sprintf("evt_%09d", i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEventPage reads a page of 100 events near the newest and near the oldest of a
// 20,000-event log: keyset pages cost the same at any depth.
func BenchmarkEventPage(b *testing.B) {
	db := testkit.OpenPostgres(b, nil)
	ctx := context.Background()
	const n = 20000
	if _, err := db.Pool().Exec(ctx, `INSERT INTO events (id, workspace_id, type, created_at, chain_time, actor_type, actor_user_id, actor_token_id, actor_address, data, prev_hash, hash)
		SELECT 'evt_' || lpad(i::text, 9, '0'), 'ws_1', CASE WHEN i = 1 THEN 'agent.deleted' ELSE 'agent.created' END, now(), now(), 'system', '', 0, '', '{}', '', 'h' || i FROM generate_series(1, $1) i`, n); err != nil {
		b.Fatal(err)
	}
	db.Pool().Exec(ctx, `VACUUM ANALYZE events`)
	// An audit page whose filter only the oldest event matches (its type): the walk looks
	// at MaxScan events (the service's MaxAuditScan) and answers an empty page with a
	// cursor; a filtered page's cost is bounded by MaxScan, not by the page.
	b.Run("filtered_rare", func(b *testing.B) {
		rare := func(e *data.Event) bool { return e.Type == "agent.deleted" }
		for b.Loop() {
			err := db.View(ctx, func(tx service.Tx) error {
				list, page, err := tx.EventPage("ws_1", service.EventFilter{Key: "rare", Keep: rare, MaxScan: service.MaxAuditScan}, data.PageRequest{PerPage: 15})
				if err == nil && (len(list) != 0 || page.NextCursor == nil) {
					err = fmt.Errorf("page of %d", len(list))
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same filter named by its type: the walk reads events_by_type to the one event.
	b.Run("type_rare", func(b *testing.B) {
		rare := func(e *data.Event) bool { return e.Type == "agent.deleted" }
		for b.Loop() {
			err := db.View(ctx, func(tx service.Tx) error {
				list, _, err := tx.EventPage("ws_1", service.EventFilter{Key: "rare", Keep: rare, MaxScan: service.MaxAuditScan, Type: "agent.deleted"}, data.PageRequest{PerPage: 15})
				if err == nil && len(list) != 1 {
					err = fmt.Errorf("page of %d", len(list))
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, depth := range []int64{100, n - 100} {
		b.Run(fmt.Sprintf("depth_%d", depth), func(b *testing.B) {
			var cursor string
			db.View(ctx, func(tx service.Tx) error {
				// Walk to the page at depth once to get a real cursor.
				req := data.PageRequest{PerPage: 100}
				for read := int64(0); read < depth; read += 100 {
					_, pg, err := tx.EventPage("ws_1", service.EventFilter{}, req)
					if err != nil {
						b.Fatal(err)
					}
					req.Cursor = *pg.NextCursor
				}
				cursor = req.Cursor
				return nil
			})
			b.ResetTimer()
			for range b.N {
				err := db.View(ctx, func(tx service.Tx) error {
					list, _, err := tx.EventPage("ws_1", service.EventFilter{}, data.PageRequest{PerPage: 100, Cursor: cursor})
					if err == nil && len(list) != 100 {
						err = fmt.Errorf("page of %d", len(list))
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEventPageOfSomeAgents: the first audit page of a caller limited to 1, 5 or 20
// agents past 20,000 events of another agent (docs/performance.md, "A limited caller's
// audit page"); VOICEAPI_BENCH_ANALYZE=1 runs ANALYZE once they are stored.
func BenchmarkEventPageOfSomeAgents(b *testing.B) {
	storetest.BenchEventPageOfSomeAgents(b, openAnalyzedStore)
}

// BenchmarkEventPageOfSomeTypes: the first audit page of a caller who sees every agent but
// not every type past 20,000 call events it may not read (docs/performance.md, "A
// limited caller's audit page"); VOICEAPI_BENCH_ANALYZE=1 runs ANALYZE once they are stored.
func BenchmarkEventPageOfSomeTypes(b *testing.B) {
	storetest.BenchEventPageOfSomeTypes(b, openAnalyzedStore)
}

// BenchmarkEventPageOfSomeKinds: the first audit page of a caller who reads some job kinds
// past 20,000 job.failed events of a kind it may not read (docs/performance.md, "A limited
// caller's audit page"); VOICEAPI_BENCH_ANALYZE=1 runs ANALYZE once they are stored.
func BenchmarkEventPageOfSomeKinds(b *testing.B) {
	storetest.BenchEventPageOfSomeKinds(b, openAnalyzedStore)
}

// BenchmarkEventWindow: an audit log and a webhook replay of a window at the start of
// 200,000 events (docs/performance.md, "A time window of events"); VOICEAPI_BENCH_ANALYZE
// settles the table.
func BenchmarkEventWindow(b *testing.B) {
	storetest.BenchEventWindow(b, openAnalyzedStore, 200000)
}
