package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/voiceapi/voiceapi/service"
)

// tx is one PostgreSQL transaction seen through service.Tx. Its methods take no context
// (the interface is the engines' common one), so it carries the one Update or View got.
type tx struct {
	ctx context.Context
	db  *DB
	q   pgx.Tx
	st  *txState
	ro  bool // a View: no row locks (FOR UPDATE is refused in a read-only transaction)
}

// txState is what a transaction leaves to do once it commits.
type txState struct {
	onCommit []func()
	wake     bool // events or deliveries were queued: wake the dispatcher
}

// maxAttempts bounds how often Update runs a function that keeps meeting serialization
// failures; past the first attempt it runs under retryLock, so it is bound to win.
const maxAttempts = 20

// retryLock is the advisory lock a retried transaction holds: the first attempt of every
// write runs optimistically in parallel; one that lost a conflict retries serialized
// with the other losers, so heavy contention on one row (a workspace's chain head) costs
// one retry per writer rather than a storm of them.
const retryLock int64 = 0x766f696365726574

// View implements service.Store: a read-only snapshot (REPEATABLE READ).
func (db *DB) View(ctx context.Context, fn func(service.Tx) error) error {
	return pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(q pgx.Tx) error {
		return fn(&tx{ctx: ctx, db: db, q: q, st: &txState{}, ro: true})
	})
}

// Update implements service.Store. Every write transaction is SERIALIZABLE, so the
// service's read-then-write rules (quotas, unique phone numbers, idempotency claims, the
// audit chain's head) hold across replicas as they do in bbolt's single writer; a
// transaction that loses a conflict runs again, as the interface allows.
func (db *DB) Update(ctx context.Context, fn func(service.Tx) error) error {
	for attempt := 0; ; attempt++ {
		st := &txState{}
		err := db.attempt(ctx, attempt > 0, func(q pgx.Tx) error {
			return fn(&tx{ctx: ctx, db: db, q: q, st: st})
		})
		if err == nil {
			for _, f := range st.onCommit {
				f()
			}
			if st.wake {
				db.wake()
			}
			return nil
		}
		if !retryable(err) || attempt+1 == maxAttempts {
			return storageError(err)
		}
		// A short random pause keeps losers from meeting again at once.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rand.IntN(1000*(attempt+1))) * time.Microsecond):
		}
	}
}

// attempt runs fn in one SERIALIZABLE transaction; a serialized one holds retryLock
// around it. The lock is taken BEFORE the transaction begins: a transaction's snapshot is
// taken at its first statement, so a lock taken inside it (pg_advisory_xact_lock) would
// be waited for with a snapshot from before the previous holder's commit, and the retry
// would meet the same conflict again.
func (db *DB) attempt(ctx context.Context, serialized bool, fn func(pgx.Tx) error) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if serialized {
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, retryLock); err != nil {
			return err
		}
		defer func() {
			// A session lock outlives the transaction: a connection that cannot
			// release it is closed, which releases it, rather than returned to the pool.
			bg := context.WithoutCancel(ctx)
			if _, err := conn.Exec(bg, `SELECT pg_advisory_unlock($1)`, retryLock); err != nil {
				conn.Conn().Close(bg)
			}
		}()
	}
	return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.Serializable}, fn)
}

// OnCommit implements service.KnowledgeTx.
func (t *tx) OnCommit(fn func()) { t.st.onCommit = append(t.st.onCommit, fn) }

// retryable reports a serialization failure or a deadlock: the transaction did nothing
// and may run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// storageError makes a full disk findable as syscall.ENOSPC (the server answers 507), as
// bbolt's is.
func storageError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "53100" {
		return fmt.Errorf("%w: %v", syscall.ENOSPC, err)
	}
	return err
}

// exec runs a statement in the transaction.
func (t *tx) exec(sql string, args ...any) (pgconn.CommandTag, error) {
	return t.q.Exec(t.ctx, sql, args...)
}

// query runs a query in the transaction.
func (t *tx) query(sql string, args ...any) (pgx.Rows, error) {
	return t.q.Query(t.ctx, sql, args...)
}

// queryRow runs a one-row query in the transaction.
func (t *tx) queryRow(sql string, args ...any) pgx.Row {
	return t.q.QueryRow(t.ctx, sql, args...)
}

// noRows turns "no row" into a nil error: absent records are nil, nil (service.Tx).
func noRows(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}

// Registration points: each resource's file adds its function in an init, so that a
// deletion reaches every kind of record in the same transaction whoever owns the table.
var (
	// workspaceCascades delete every record of one resource kind in a workspace; members,
	// tokens and events are removed after them by DeleteWorkspace itself.
	workspaceCascades []func(t *tx, workspaceID string) error
	// agentDeleteHooks run in an agent's delete transaction (unbind numbers, drop the
	// agent from members' agent_ids).
	agentDeleteHooks []func(t *tx, workspaceID, agentID string) error
	// knowledgeBaseDeleteHooks run in a knowledge base's delete transaction (drop it from
	// agents' knowledge_base_ids).
	knowledgeBaseDeleteHooks []func(t *tx, workspaceID, kbID string) error
	// quotaCounters count a workspace's records of one data.Limit* kind, up to a bound
	// (LimitTx.CountUpTo).
	quotaCounters = map[string]func(t *tx, workspaceID string, upTo int64) (int64, error){}
)
var _ service.Tx = (*tx)(nil)
