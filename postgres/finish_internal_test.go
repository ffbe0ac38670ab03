package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A write whose COMMIT fails (a deferred constraint here; in the service's writes, a
// serialization failure found at COMMIT) gives back its session locks, the fence's and
// its workspace's, and its connection stays open for the next write: PostgreSQL skips
// the unlock sent in the COMMIT's message once the COMMIT fails, so finish sends it
// again on its own. Kept, the fence's lock made every later migration wait for ever.
func TestAFailedCommitGivesBackItsLocks(t *testing.T) {
	db := openCallsTestDB(t)
	ctx := context.Background()
	if _, err := db.pool.Exec(ctx, `CREATE TABLE commit_fails (id int PRIMARY KEY,
		ref int REFERENCES commit_fails DEFERRABLE INITIALLY DEFERRED)`); err != nil {
		t.Fatal(err)
	}
	wctx := data.WithPrincipal(ctx, &data.Principal{CurrentWorkspaceID: "ws_01M8PJKXCQAW2M68WVPKBZQC82"})
	var pid, held int
	err := db.Update(wctx, func(stx service.Tx) error {
		in := stx.(*tx)
		if err := in.queryRow(`SELECT pg_backend_pid(), (SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND pid = pg_backend_pid())`).Scan(&pid, &held); err != nil {
			return err
		}
		_, err := in.exec(`INSERT INTO commit_fails VALUES (1, 2)`) // row 2 never comes
		return err
	})
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23503" {
		t.Fatalf("the write: %v, want its COMMIT's foreign key violation", err)
	}
	if held < 2 {
		t.Fatalf("the write held %d advisory locks, want the fence's and its workspace's", held)
	}
	var left int
	var open bool
	if err := db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = $1),
		EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&left, &open); err != nil {
		t.Fatal(err)
	}
	if left != 0 || !open {
		t.Errorf("after the failed COMMIT its connection holds %d advisory locks (open: %v), want none and open", left, open)
	}
}
