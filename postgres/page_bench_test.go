package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkKeysetPage reads pages of 100 of a 20,000-agent workspace through pageRows,
// the keyset page every PostgreSQL list but calls and events uses (here AgentIDs): the
// newest page, an older page deep in the list (its prev_cursor check included) and the
// previous page read back from that page's prev_cursor (rows read nearest first, then
// flipped).
func BenchmarkKeysetPage(b *testing.B) {
	db := testkit.OpenPostgres(b, nil)
	ctx := context.Background()
	const n = 20000
	if _, err := db.Pool().Exec(ctx, `INSERT INTO agents (id, workspace_id, name, name_folded, status, config, privacy, created_at, updated_at)
		SELECT 'agent_' || lpad(i::text, 9, '0'), 'ws_1', 'Agent ' || i, 'agent ' || i, 'draft', '{}', '{}', now(), now() FROM generate_series(1, $1) i`, n); err != nil {
		b.Fatal(err)
	}
	db.Pool().Exec(ctx, `VACUUM ANALYZE agents`)
	page := func(req data.PageRequest) (data.Page, error) {
		var pg data.Page
		err := db.View(ctx, func(tx service.Tx) error {
			ids, p, err := tx.AgentIDs("ws_1", "", nil, service.AgentSearch{}, req)
			if err == nil && len(ids) != 100 {
				err = fmt.Errorf("page of %d", len(ids))
			}
			pg = p
			return err
		})
		return pg, err
	}
	// Walk to a page deep in the list once, for real cursors.
	req := data.PageRequest{PerPage: 100}
	for read := 0; read < n/2; read += 100 {
		pg, err := page(req)
		if err != nil {
			b.Fatal(err)
		}
		req.Cursor = *pg.NextCursor
	}
	deep, err := page(req)
	if err != nil || deep.PrevCursor == nil {
		b.Fatalf("deep page: %v, prev_cursor %v", err, deep.PrevCursor)
	}
	for _, tc := range []struct {
		name string
		req  data.PageRequest
	}{
		{"first", data.PageRequest{PerPage: 100}},
		{"deep", req},
		{"prev", data.PageRequest{PerPage: 100, Cursor: *deep.PrevCursor}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := page(tc.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
