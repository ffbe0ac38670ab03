package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
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
// and refreshes the planner's statistics of both tables.
func DeriveCallTermCounts(ctx context.Context, db *DB) error {
	return pgx.BeginFunc(ctx, db.pool, func(q pgx.Tx) error {
		for _, sql := range []string{`DELETE FROM call_term_counts`,
			`INSERT INTO call_term_counts ` + callTermCountsFromPostings, `ANALYZE call_terms`, `ANALYZE call_term_counts`} {
			if _, err := q.Exec(ctx, sql); err != nil {
				return err
			}
		}
		return nil
	})
}

// CallTermCountMismatches counts the rows of call_term_counts that differ from what the
// postings add up to (0 when every write kept them exact).
func CallTermCountMismatches(ctx context.Context, db *DB) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM ((TABLE call_term_counts EXCEPT `+callTermCountsFromPostings+`)
		UNION ALL (`+callTermCountsFromPostings+` EXCEPT TABLE call_term_counts)) d`).Scan(&n)
	return n, err
}
