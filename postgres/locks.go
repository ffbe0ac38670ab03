package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/voiceapi/voiceapi/data"
)

// Workspace locks. Every write of a workspace changes a few rows every other write of it
// changes too: the audit chain's head (event_heads), and for calls the scope counts,
// hourly rollups and month's minutes. Under SERIALIZABLE, a transaction that finds such
// a row changed by a writer that committed after its snapshot fails (SQLSTATE 40001)
// rather than waits, and under load nearly every write did so (issue 24: one failure a
// write, and 500s once the retries ran out). So these rows are changed only under the
// workspace's advisory lock, taken before the snapshot: a writer of the same workspace
// waits for the lock, then starts its snapshot after the previous holder committed, and
// its changes to the hot rows cannot conflict.
//
// Which workspace a write will touch is known before it begins only from its caller: the
// principal's current workspace (lockHint), where nearly every request writes. A write
// that touches another workspace's hot rows locks it inside the transaction
// (lockWorkspace): uncontended that costs one statement more; contended it may fail
// once, and its retry takes that workspace's lock before its snapshot too, so it cannot
// fail on those rows again.

// lockSpace is the first key of the workspaces' advisory locks (the two-key form, apart
// from the one-key locks of migrations and retries).
const lockSpace int32 = 0x76617069

// workspaceKey is the second key of the workspace's lock. Two workspaces sharing a key
// only wait for each other.
func workspaceKey(ws string) int32 {
	h := fnv.New32a()
	h.Write([]byte(ws))
	return int32(h.Sum32())
}

// lockSet is the workspaces an attempt locks before its snapshot.
type lockSet []string

// lockHint is the workspace a write of ctx's caller most likely touches.
func lockHint(ctx context.Context) lockSet {
	if p := data.PrincipalFrom(ctx); p != nil && p.CurrentWorkspaceID != "" {
		return lockSet{p.CurrentWorkspaceID}
	}
	return nil
}

// with is s and the workspaces of more.
func (s lockSet) with(more []string) lockSet {
	out := slices.Clone(s)
	for _, ws := range more {
		if !slices.Contains(out, ws) {
			out = append(out, ws)
		}
	}
	return out
}

// keys are the second keys of s's locks in ascending order, once each: every attempt
// takes its locks in this order, so two attempts never wait for each other's.
func (s lockSet) keys() []int32 {
	keys := make([]int32, 0, len(s))
	for _, ws := range s {
		keys = append(keys, workspaceKey(ws))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// lockSQL takes the fence's lock shared (fence.go), then retryLock when serialized, then
// s's locks: the fence's first, so a write waiting for a migration holds no workspace.
func (s lockSet) lockSQL(serialized bool) string {
	return s.sql("pg_advisory_lock_shared", "pg_advisory_lock", serialized)
}

// unlockSQL gives them back.
func (s lockSet) unlockSQL(serialized bool) string {
	return s.sql("pg_advisory_unlock_shared", "pg_advisory_unlock", serialized)
}

func (s lockSet) sql(shared, fn string, serialized bool) string {
	calls := []string{shared + "(" + strconv.FormatInt(fenceLock, 10) + ")"}
	if serialized {
		calls = append(calls, fn+"("+strconv.FormatInt(retryLock, 10)+")")
	}
	for _, k := range s.keys() {
		calls = append(calls, fn+"("+strconv.Itoa(int(lockSpace))+", "+strconv.Itoa(int(k))+")")
	}
	return "SELECT " + strings.Join(calls, ", ")
}

// held is the set of s's workspaces.
func (s lockSet) held() map[string]bool {
	m := make(map[string]bool, len(s)+1)
	for _, ws := range s {
		m[ws] = true
	}
	return m
}

// lockAndBegin sends the locks, the schema version's read (the fence), BEGIN and the
// locked workspaces' chain heads in one round trip (a pipeline): the locks and then the
// version's read in an implicit transaction of their own (session locks outlive it; the
// sessions are READ COMMITTED, db.go, so the read's snapshot is taken once the fence's
// lock is held: fence.go), outside the SERIALIZABLE transaction, which the read would
// otherwise join to every migration's conflict graph for nothing; then BEGIN, the index
// plans' setting (tx.go; the transaction's first statement, so its snapshot is taken
// once the locks are held) and the heads' read. The heads cannot move but by this
// transaction until it ends, so EventHead answers from them: most writes record an
// event, and the head's read was one more round trip inside the workspace's turn. It
// returns the version read: the newest and how many.
func (w *writeTx) lockAndBegin(ctx context.Context, lockSQL, beginSQL string) (newest, count int, err error) {
	serializable := w.level == pgx.Serializable
	readHeads := serializable && len(w.locks) > 0
	// The version's read is prepared once a connection: it is every write's, and its plan
	// was most of its cost (docs/performance.md, fence2).
	check, err := w.conn.Conn().Prepare(ctx, "voiceapi_fence", fenceSQL)
	if err != nil {
		return 0, 0, err
	}
	p := w.conn.Conn().PgConn().StartPipeline(ctx)
	p.SendQueryParams(lockSQL, nil, nil, nil, nil)
	p.SendQueryStatement(check, nil, nil, nil) // READ COMMITTED (db.go): its own snapshot
	p.SendPipelineSync()
	p.SendQueryParams(beginSQL, nil, nil, nil, nil)
	if serializable { // index plans (tx.go) from the first statement on
		p.SendQueryParams(indexPlansSQL, nil, nil, nil, nil)
	}
	if readHeads {
		p.SendQueryParams(`SELECT workspace_id, hash FROM event_heads WHERE workspace_id = ANY($1::text[])`,
			[][]byte{textArray(w.locks)}, nil, nil, nil)
	}
	p.SendPipelineSync()
	if err := p.Flush(); err != nil {
		p.Close()
		return 0, 0, err
	}
	const versionResult, headsResult = 1, 4 // lock, version, BEGIN, index plans, heads
	heads := map[string]string{}
	read := false
	for results, syncs := 0, 0; syncs < 2; {
		res, err := p.GetResults()
		if err != nil {
			p.Close()
			return 0, 0, err
		}
		switch r := res.(type) {
		case *pgconn.ResultReader:
			for r.NextRow() {
				switch {
				case results == versionResult && !read:
					newest, err = strconv.Atoi(string(r.Values()[0]))
					if err == nil {
						count, err = strconv.Atoi(string(r.Values()[1]))
					}
					if err != nil {
						p.Close()
						return 0, 0, fmt.Errorf("reading the schema version: %w", err)
					}
					read = true
				case results == headsResult && readHeads:
					heads[string(r.Values()[0])] = string(r.Values()[1])
				}
			}
			if _, err := r.Close(); err != nil {
				p.Close()
				return 0, 0, err
			}
			results++
		case *pgconn.PipelineSync:
			syncs++
		case nil:
			syncs = 2
		}
	}
	if err := p.Close(); err != nil {
		return 0, 0, err
	}
	if !read {
		return 0, 0, errors.New("reading the schema version: no row")
	}
	if readHeads {
		w.heads = make(map[string]string, len(w.locks))
		for _, ws := range w.locks {
			w.heads[ws] = heads[ws] // "" for a workspace with no chain yet
		}
	}
	return newest, count, nil
}

// textArray is ids as a text[] parameter in text format.
func textArray(ids []string) []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(id))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// knownHead is ws's chain head as this transaction read or moved it with its lock held,
// if it did.
func (t *tx) knownHead(ws string) (string, bool) {
	if t.w == nil || t.w.heads == nil {
		return "", false
	}
	h, ok := t.w.heads[ws]
	return h, ok
}

// movedHead notes the transaction's change of ws's head (gone: the head was deleted).
func (t *tx) movedHead(ws, hash string, gone bool) {
	if t.w == nil || t.w.heads == nil {
		return
	}
	if gone {
		delete(t.w.heads, ws)
		return
	}
	t.w.heads[ws] = hash
}

// lockWorkspace is called before a write transaction changes ws's hot rows: when the
// transaction did not lock ws before its snapshot, it locks ws now (until it ends), and
// notes ws for a retry to lock first. In a View it does nothing.
func (t *tx) lockWorkspace(ws string) error {
	if t.w == nil {
		return nil
	}
	if err := t.begin(); err != nil {
		return err
	}
	if t.w.held[ws] {
		return nil
	}
	t.w.held[ws] = true
	t.st.touched = append(t.st.touched, ws)
	_, err := t.exec(`SELECT pg_advisory_xact_lock($1, $2)`, lockSpace, workspaceKey(ws))
	return err
}
