package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// CopyCallTerms stores the postings of calls (call id → term → frequency) of workspace ws
// with COPY, leaving call_term_counts as it is (a bulk load for benchmarks;
// DeriveCallTermCounts then fills it).
func CopyCallTerms(ctx context.Context, db *DB, ws string, terms map[string]map[string]int) error {
	var rows [][]any
	for id, ts := range terms {
		for term, tf := range ts {
			rows = append(rows, []any{ws, term, id, int16(tf)})
		}
	}
	_, err := db.pool.CopyFrom(ctx, pgx.Identifier{"call_terms"}, []string{"workspace_id", "term", "call_id", "tf"}, pgx.CopyFromRows(rows))
	return err
}

// callTermCountsFromPostings is what call_term_counts must hold.
const callTermCountsFromPostings = `SELECT workspace_id, term, count(*) FROM call_terms GROUP BY 1, 2`

// DeriveCallTermCounts fills call_term_counts from the postings, replacing what it held,
// then vacuums the calls and the postings (as autovacuum would have after a bulk load:
// index-only scans then skip the heap) and refreshes the planner's statistics.
func DeriveCallTermCounts(ctx context.Context, db *DB) error {
	err := pgx.BeginFunc(ctx, db.pool, func(q pgx.Tx) error {
		_, err := q.Exec(ctx, `DELETE FROM call_term_counts`)
		if err == nil {
			_, err = q.Exec(ctx, `INSERT INTO call_term_counts `+callTermCountsFromPostings)
		}
		return err
	})
	if err != nil {
		return err
	}
	_, err = db.pool.Exec(ctx, `VACUUM (ANALYZE) calls, call_terms, call_term_counts`)
	return err
}

// CallTermCountMismatches counts the rows of call_term_counts that differ from what the
// postings add up to (0 when every write kept them exact).
func CallTermCountMismatches(ctx context.Context, db *DB) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM ((TABLE call_term_counts EXCEPT `+callTermCountsFromPostings+`)
		UNION ALL (`+callTermCountsFromPostings+` EXCEPT TABLE call_term_counts)) d`).Scan(&n)
	return n, err
}

// CountRows runs a query outside any transaction and counts its rows (benchmarks compare
// forms of one query with it).
func CountRows(ctx context.Context, db *DB, sql string, args ...any) (int, error) {
	rows, err := db.pool.Query(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

// ExplainSearch returns the plan, as run (EXPLAIN ANALYZE), of the walk a first page of
// 20 hits of s makes.
func ExplainSearch(ctx context.Context, db *DB, ws string, f data.CallFilter, s data.CallSearch) (string, error) {
	var plan strings.Builder
	err := db.View(ctx, func(stx service.Tx) error {
		t := stx.(*tx)
		sq, err := t.newSearchQuery(ws, nil, f, s)
		if err != nil {
			return err
		}
		sql, args := sq.walkSQL(true, "", false, 22, callCols)
		rows, err := t.query("EXPLAIN (ANALYZE, BUFFERS) "+sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			plan.WriteString(line + "\n")
		}
		return rows.Err()
	})
	return plan.String(), err
}
