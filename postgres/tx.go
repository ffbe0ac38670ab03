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
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// tx is one PostgreSQL transaction seen through service.Tx. Its methods take no context
// (the interface is the engines' common one), so it carries the one Update or View got.
type tx struct {
	ctx context.Context
	db  *DB
	q   querier // nil in an Update until it begins: statements go through exec, query… (begin)
	st  *txState
	ro  bool      // a View: no row locks (FOR UPDATE is refused in a read-only transaction)
	w   *writeTx  // an Update's connection and what it holds; nil in a View
	err *txFailed // set when BEGIN failed: every later statement returns it
}

// querier is what the resource files run statements on: the View's pgx.Tx, or the
// Update's connection once its transaction has begun.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error)
}

// txState is what a transaction leaves to do once it commits.
type txState struct {
	onCommit []func()
	wake     bool // events or deliveries were queued: wake the dispatcher
	// touched are the workspaces whose hot rows (locks.go) the attempt used: a retry
	// locks them before its snapshot.
	touched []string
}

// txFailed is a failure of BEGIN (or of the locks taken with it): nothing of the
// attempt ran, so it may run again on another connection whatever the failure.
type txFailed struct{ err error }

func (e *txFailed) Error() string { return e.err.Error() }
func (e *txFailed) Unwrap() error { return e.err }

// maxAttempts bounds how often Update runs a function that keeps meeting serialization
// failures. The first retry holds the locks of every workspace the failed attempt
// touched from before its snapshot, so it cannot lose on their hot rows again; later
// ones also hold retryLock.
const maxAttempts = 20

// retryLock is the advisory lock an attempt past the second holds: writes that lost a
// conflict on rows no workspace lock covers (two requests for one phone number, one
// Idempotency-Key) retry one at a time instead of meeting again.
const retryLock int64 = 0x766f696365726574

// maxReconnects bounds how often an Update or View whose connection failed before any
// of its statements ran is tried again on a fresh one: after a PostgreSQL restart the
// pool's connections are dead, and each would otherwise fail one request with 503.
const maxReconnects = 3

// finishTimeout bounds the COMMIT or ROLLBACK of a write (a COMMIT waits for its WAL
// flush, seconds at worst on a loaded disk).
const finishTimeout = 30 * time.Second

// View implements service.Store: a read-only snapshot (REPEATABLE READ).
func (db *DB) View(ctx context.Context, fn func(service.Tx) error) error {
	for reconnect := 0; ; reconnect++ {
		err := db.view(ctx, fn)
		var failed *txFailed
		if errors.As(err, &failed) && reconnect < maxReconnects && unavailable(err) && ctx.Err() == nil {
			continue
		}
		return storageError(err)
	}
}

func (db *DB) view(ctx context.Context, fn func(service.Tx) error) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return &txFailed{err}
	}
	defer conn.Release()
	q, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return &txFailed{err}
	}
	defer q.Rollback(context.WithoutCancel(ctx))
	if err := fn(&tx{ctx: ctx, db: db, q: q, st: &txState{}, ro: true}); err != nil {
		return err
	}
	return q.Commit(ctx)
}

// Update implements service.Store. Every write transaction is SERIALIZABLE, so the
// service's read-then-write rules (quotas, unique phone numbers, idempotency claims) hold
// across replicas as they do in bbolt's single writer. The rows every write of a
// workspace changes (the audit chain's head, the call counters) are taken in turns
// under the workspace's lock before the snapshot (locks.go), so writers of one
// workspace wait for each other instead of failing; a transaction that loses another
// conflict runs again, as the interface allows, a bounded number of times.
// Once a newer binary has migrated the database, nothing runs (fence.go).
func (db *DB) Update(ctx context.Context, fn func(service.Tx) error) error {
	if err := db.fence.failed(); err != nil {
		return err
	}
	locks := lockHint(ctx)
	reconnects := 0
	for attempt := 0; ; {
		st := &txState{}
		err := db.attempt(ctx, locks, attempt > 1, st, fn)
		if err == nil {
			for _, f := range st.onCommit {
				f()
			}
			if st.wake {
				db.wake()
			}
			return nil
		}
		var failed *txFailed
		switch {
		case errors.As(err, &failed) && unavailable(err) && reconnects < maxReconnects && ctx.Err() == nil:
			reconnects++ // nothing ran: the same attempt on a fresh connection
			continue
		case !retryable(err) || attempt+1 == maxAttempts:
			return storageError(err)
		}
		attempt++
		locks = locks.with(st.touched)
		// A short random pause keeps losers from meeting again at once.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rand.IntN(1000*attempt)) * time.Microsecond):
		}
	}
}

// attempt runs fn in one transaction on one connection. The transaction begins at its
// first statement (begin), so an Update that reads nothing costs no round trip.
func (db *DB) attempt(ctx context.Context, locks lockSet, serialized bool, st *txState, fn func(service.Tx) error) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return &txFailed{err}
	}
	w := &writeTx{conn: conn, level: pgx.Serializable, locks: locks, serialized: serialized}
	defer w.abandonOnPanic()
	t := &tx{ctx: ctx, db: db, st: st, w: w} // q is set once the transaction has begun
	err = fn(t)
	if t.err != nil {
		err = t.err // BEGIN failed: whatever fn made of it, nothing ran
	}
	return w.finish(ctx, err)
}

// writeOnce runs fn in one READ COMMITTED write transaction, once: the writes made outside
// Update (a job claim, a knowledge file, last_used_at, the start's rows), which pass the
// fence as Update's do (begin). The rate counts pass it their own way (tryFenced).
func (db *DB) writeOnce(ctx context.Context, fn func(t *tx) error) error {
	if err := db.fence.failed(); err != nil {
		return err
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return storageError(err)
	}
	w := &writeTx{conn: conn, level: pgx.ReadCommitted}
	defer w.abandonOnPanic()
	t := &tx{ctx: ctx, db: db, st: &txState{}, w: w}
	err = fn(t)
	if t.err != nil {
		err = t.err // BEGIN failed, or the fence: whatever fn made of it, nothing ran
	}
	return storageError(w.finish(ctx, err))
}

// writeTx is an Update's connection and the transaction on it.
type writeTx struct {
	conn  *pgxpool.Conn
	level pgx.TxIsoLevel
	// locks are the workspaces locked before the snapshot (with retryLock when
	// serialized); held the workspaces locked so far, inside the transaction included.
	locks      lockSet
	serialized bool
	held       map[string]bool
	begun      bool
	sessionSQL string // the session locks taken at BEGIN, released after COMMIT
	// heads are the chain heads of the locked workspaces, read with BEGIN ("" for none),
	// kept as the transaction moves them; nil when none were read.
	heads map[string]string
}

// begin starts the transaction before its first statement: the locks first, then BEGIN
// and the schema version's read, sent together (one round trip). PostgreSQL takes a
// SERIALIZABLE transaction's snapshot at its first statement, so a lock taken inside the
// transaction (pg_advisory_xact_lock) would be waited for with a snapshot from before the
// previous holder committed, and the rows it guards would fail to serialize all the same:
// these are session locks, taken before BEGIN and given back after COMMIT. Among them is
// the fence's (fence.go): a write that finds a newer binary's migration stops here.
func (t *tx) begin() error {
	if t.err != nil {
		return t.err
	}
	w := t.w
	if w == nil || w.begun {
		return nil
	}
	w.begun = true
	lockSQL := w.locks.lockSQL(w.serialized)
	w.held = w.locks.held()
	w.sessionSQL = w.locks.unlockSQL(w.serialized)
	newest, count, err := w.lockAndBegin(t.ctx, lockSQL, "BEGIN ISOLATION LEVEL "+isolation(w.level))
	if err == nil {
		err = t.db.verdict(newest, count)
	}
	if err != nil {
		// The connection's state is unknown (a lock held, a transaction open), or the
		// database is a newer binary's: close it, which ends both.
		w.conn.Conn().Close(context.WithoutCancel(t.ctx))
		t.err = &txFailed{err}
		return t.err
	}
	t.q = w.conn
	return nil
}

// indexPlansSQL makes the planner of a SERIALIZABLE write prefer any index to a
// sequential scan, for the rest of the transaction. SSI locks what a sequential scan read
// as the whole relation (SIReadLock on the table), and the planner picks one for a point
// lookup on a small table (event_heads, users, api_keys, members, agents of a young
// database, once ANALYZE has counted their rows): then every write that read it
// conflicted with every other write that changed any row of it, whatever its workspace
// (about one serialization failure a write between separate workspaces,
// docs/performance.md). An index scan is locked by the index page it read. Plans are made
// anew for the transaction (force_custom_plan): a connection's cached generic plan may
// have been made by a read with sequential scans allowed. Plans change, results do not.
const indexPlansSQL = `SELECT ` + indexPlanSettings

// indexPlanSettings are indexPlansSQL's settings, for a statement that makes them along
// with something else (a campaign's recipients batch: campaigns.go).
const indexPlanSettings = `set_config('enable_seqscan', 'off', true), set_config('plan_cache_mode', 'force_custom_plan', true)`

// isolation is level as BEGIN spells it.
func isolation(level pgx.TxIsoLevel) string {
	if level == pgx.ReadCommitted {
		return "READ COMMITTED"
	}
	return "SERIALIZABLE"
}

// finish commits (fnErr nil) or rolls back the transaction, gives back the session
// locks in the same message, and releases the connection: closed when its state is not
// known, which ends its session and so its locks.
func (w *writeTx) finish(ctx context.Context, fnErr error) error {
	defer w.conn.Release()
	if !w.begun {
		return fnErr
	}
	end := "COMMIT"
	if fnErr != nil {
		end = "ROLLBACK"
	}
	// The end is sent whatever became of the request (a client gone still leaves the
	// transaction to end and the locks to give back), within a bound: a connection that
	// does not answer is closed, which ends both.
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	results, err := w.conn.Conn().PgConn().Exec(bg, end+";"+w.sessionSQL).ReadAll()
	switch {
	case err != nil && !unavailable(err):
		// The end failed (a serialization failure at COMMIT), which skipped the unlock
		// after it: give the locks back on their own rather than reconnect (every write
		// holds the fence's lock).
		if _, err := w.conn.Conn().PgConn().Exec(bg, w.sessionSQL).ReadAll(); err != nil {
			w.conn.Conn().Close(bg)
		}
	case err != nil:
		w.conn.Conn().Close(bg)
	case len(results) > 0 && fnErr == nil && results[0].CommandTag.String() == "ROLLBACK":
		err = pgx.ErrTxCommitRollback // the transaction had failed: COMMIT rolled it back
	}
	if fnErr != nil {
		return fnErr
	}
	return err
}

// abandonOnPanic, deferred, closes w's connection when the function it runs panicked,
// and passes the panic on: the server and the job runner recover from it and go on, and
// the connection, never given back, kept its transaction open and its session locks,
// the fence's among them, so that every later migration waited for ever.
func (w *writeTx) abandonOnPanic() {
	if p := recover(); p != nil {
		ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
		defer cancel()
		w.conn.Conn().Close(ctx) // ends the transaction and the locks; Release drops it
		w.conn.Release()
		panic(p)
	}
}

// OnCommit implements service.KnowledgeTx.
func (t *tx) OnCommit(fn func()) { t.st.onCommit = append(t.st.onCommit, fn) }

// claimQueue makes a write transaction that has not begun READ COMMITTED: its first act
// locks the rows of a queue it works on (the outbox, due deliveries: FOR UPDATE SKIP
// LOCKED; the delivery whose attempt it finishes: FOR UPDATE), and those row locks are
// what keeps two dispatchers apart. At SERIALIZABLE the dispatchers of several replicas
// aborted each other although each held rows the other did not touch: PostgreSQL's
// predicate locks cover index pages, and their rows share pages. The service reads no
// rule's data in these transactions.
func (t *tx) claimQueue() {
	if t.w != nil && !t.w.begun {
		t.w.level = pgx.ReadCommitted
	}
}

// retryable reports a serialization failure or a deadlock: the transaction did nothing
// and may run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// storageError makes a full disk findable as syscall.ENOSPC (the server answers 507), as
// bbolt's is, and an unreachable database as data.ErrStorageUnavailable (503).
func storageError(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "53100" {
		return fmt.Errorf("%w: %w", syscall.ENOSPC, err)
	}
	// Text holding U+0000, which PostgreSQL's text and jsonb cannot store (22021,
	// 22P05). The server's readers refuse it with the field named first; this is the
	// net under a channel they miss, a 422 rather than a 500, and nothing is written.
	if errors.As(err, &pe) && (pe.Code == "22021" || pe.Code == "22P05") {
		return data.FieldError("body", "A text of the request holds U+0000 (a NUL character), which cannot be stored.")
	}
	return unavailableError(err)
}

// exec runs a statement in the transaction.
func (t *tx) exec(sql string, args ...any) (pgconn.CommandTag, error) {
	if err := t.begin(); err != nil {
		return pgconn.CommandTag{}, err
	}
	return t.q.Exec(t.ctx, sql, args...)
}

// query runs a query in the transaction.
func (t *tx) query(sql string, args ...any) (pgx.Rows, error) {
	if err := t.begin(); err != nil {
		return nil, err
	}
	return t.q.Query(t.ctx, sql, args...)
}

// queryRow runs a one-row query in the transaction.
func (t *tx) queryRow(sql string, args ...any) pgx.Row {
	if err := t.begin(); err != nil {
		return errRow{err}
	}
	return t.q.QueryRow(t.ctx, sql, args...)
}

// sendBatch runs the queued statements in one round trip.
func (t *tx) sendBatch(b *pgx.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	if err := t.begin(); err != nil {
		return err
	}
	return t.q.SendBatch(t.ctx, b).Close()
}

// batch sends the queued statements in one round trip for the caller to read.
func (t *tx) batch(b *pgx.Batch) (pgx.BatchResults, error) {
	if err := t.begin(); err != nil {
		return nil, err
	}
	return t.q.SendBatch(t.ctx, b), nil
}

// copyFrom bulk-inserts rows (COPY).
func (t *tx) copyFrom(table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error) {
	if err := t.begin(); err != nil {
		return 0, err
	}
	return t.q.CopyFrom(t.ctx, table, columns, rows)
}

// errRow is a row whose query could not be sent.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

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
