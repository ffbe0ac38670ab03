package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// migrationBackfills are the Go steps of migrations, by the migration's name (the file's
// name after its number, so that a renumbering keeps the step): what SQL cannot compute.
var migrationBackfills = map[string]func(context.Context, pgx.Tx) error{
	"search_folded": foldSearchedColumns,
	// 0041: data.FoldCase changed (a final sigma folds as σ); the same walk folds again.
	"search_refolded": foldSearchedColumns,
}

// foldedColumns are the searched texts and the copies data.FoldCase folds them into.
var foldedColumns = []struct{ table, text, folded string }{
	{"agents", "name", "name_folded"},
	{"numbers", "nickname", "nickname_folded"},
}

// foldBatch is how many rows one round of foldSearchedColumns reads: memory and the size
// of one statement stay bounded whatever the table's size.
const foldBatch = 1000

// foldSearchedColumns writes each row's folded copy of its searched text (migration
// 0040, again in 0041), walking each table in primary key order a batch at a time. It writes only the
// rows whose copy differs from the fold, so running it again changes nothing.
func foldSearchedColumns(ctx context.Context, tx pgx.Tx) error {
	for _, c := range foldedColumns {
		read := fmt.Sprintf(`SELECT id, %s, %s FROM %s WHERE id > $1 ORDER BY id LIMIT %d`, c.text, c.folded, c.table, foldBatch)
		// The batch's key range keeps the join to that range of the primary key whatever
		// plan the server picks: planned for a 1,000-id array, the join without it hashed
		// the whole table for each batch (125 ms a batch at 100,000 agents, 45 ms with it).
		write := fmt.Sprintf(`UPDATE %s SET %s = f.folded FROM unnest($1::text[], $2::text[]) AS f(id, folded)
			WHERE %[1]s.id = f.id AND %[1]s.id >= $3 AND %[1]s.id <= $4`, c.table, c.folded)
		for after := ""; ; {
			rows, err := tx.Query(ctx, read, after)
			if err != nil {
				return fmt.Errorf("%s: %w", c.table, err)
			}
			var ids, folds []string
			n := 0
			var id, text, stored string
			_, err = pgx.ForEachRow(rows, []any{&id, &text, &stored}, func() error {
				n, after = n+1, id
				if f := data.FoldCase(text); f != stored {
					ids, folds = append(ids, id), append(folds, f)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("%s: %w", c.table, err)
			}
			if len(ids) > 0 {
				if _, err := tx.Exec(ctx, write, ids, folds, ids[0], ids[len(ids)-1]); err != nil {
					return fmt.Errorf("%s: %w", c.table, err)
				}
			}
			if n < foldBatch {
				break
			}
		}
	}
	return nil
}
