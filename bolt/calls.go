package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// bucketCallMinutes holds the milliseconds of the calls that ended in each calendar month
// of a workspace, key "<ws>\x00YYYY-MM": the usage the call_minutes_per_month limit reads.
var bucketCallMinutes = []byte("call_minutes")

func minutesKey(ws string, t time.Time) []byte {
	return indexKey(ws, t.UTC().Format("2006-01"))
}

// appendFill is the page fill of buckets whose keys are time-ordered ids: new keys land at
// the end of their scope, so pages split at bbolt's default 50% would stay half empty.
const appendFill = 0.9

// insertCall writes a new call with its indexes, rollups and minutes. It is the one path
// every stored call takes (the API and the benchmarks' bulk load).
func insertCall(tx *bbolt.Tx, c *data.Call) error {
	b := tx.Bucket(bucketCalls)
	// Calls arrive in id order, at the bucket's end: its pages fill whole. (A call that
	// grows when it is updated splits its page whatever the fill.)
	b.FillPercent = appendOnlyFill
	// A call stored again under its id keeps its events' payloads (none reference a new one).
	if err := materializeCallRefs(tx, c.ID); err != nil {
		return err
	}
	if err := putJSON(b, []byte(c.ID), c); err != nil {
		return err
	}
	a := attrsOf(c)
	if err := moveCallIndexes(tx, c.WorkspaceID, c.ID, nil, &a); err != nil {
		return err
	}
	if err := adjustRollups(tx, c, 1); err != nil {
		return err
	}
	if err := moveOpenCall(tx, nil, c); err != nil {
		return err
	}
	if data.CallFinal(c.Status) {
		return addMinutes(tx, c)
	}
	return nil
}

// addMinutes counts a finished call's duration in the month it ended. Minutes are
// consumption: deleting the call later does not give them back.
func addMinutes(tx *bbolt.Tx, c *data.Call) error {
	if c.DurationMS == nil || c.EndedAt == nil || *c.DurationMS == 0 {
		return nil
	}
	b := tx.Bucket(bucketCallMinutes)
	key := minutesKey(c.WorkspaceID, c.EndedAt.Time)
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], scopeCountOf(b, string(key))+uint64(*c.DurationMS))
	return b.Put(key, buf[:])
}

// monthMS returns the milliseconds of calls of ws that ended in the month of t.
func monthMS(tx *bbolt.Tx, ws string, t time.Time) int64 {
	return int64(scopeCountOf(tx.Bucket(bucketCallMinutes), string(minutesKey(ws, t))))
}

// Call implements service.CallTx.
func (t tx) Call(id string) (*data.Call, error) {
	var c data.Call
	found, err := getJSON(t.b.Bucket(bucketCalls), []byte(id), &c)
	if err != nil || !found {
		return nil, err
	}
	return &c, nil
}

// Calls implements service.CallTx.
func (t tx) Calls(ws string, agentIDs []string, f data.CallFilter, req data.PageRequest) ([]*data.Call, data.Page, error) {
	q := newCallQuery(t.b, ws, agentIDs, f)
	ids, page, err := q.page(t.db, t.b, req)
	if err != nil {
		return nil, page, err
	}
	calls := t.b.Bucket(bucketCalls)
	list := make([]*data.Call, 0, len(ids))
	for _, id := range ids {
		var c data.Call
		found, err := getJSON(calls, []byte(id), &c)
		if err != nil {
			return nil, page, err
		}
		if !found {
			return nil, page, fmt.Errorf("call %s is indexed but not stored", id)
		}
		list = append(list, &c)
	}
	return list, page, nil
}

// InsertCall implements service.CallTx.
func (t tx) InsertCall(c *data.Call) error { return insertCall(t.b, c) }

// PutCall implements service.CallTx.
func (t tx) PutCall(next *data.Call) error {
	old, err := t.Call(next.ID)
	if err != nil {
		return err
	}
	if old == nil {
		return fmt.Errorf("call %s is not stored", next.ID)
	}
	if err := materializeCallRefs(t.b, next.ID); err != nil {
		return err
	}
	if err := putJSON(t.b.Bucket(bucketCalls), []byte(next.ID), next); err != nil {
		return err
	}
	oldA, nextA := attrsOf(old), attrsOf(next)
	if oldA != nextA {
		if err := moveCallIndexes(t.b, next.WorkspaceID, next.ID, &oldA, &nextA); err != nil {
			return err
		}
	}
	if err := adjustRollups(t.b, old, -1); err != nil {
		return err
	}
	if err := adjustRollups(t.b, next, 1); err != nil {
		return err
	}
	if err := moveOpenCall(t.b, old, next); err != nil {
		return err
	}
	if !data.CallFinal(old.Status) && data.CallFinal(next.Status) {
		return addMinutes(t.b, next)
	}
	return nil
}

// DeleteCall implements service.CallTx.
func (t tx) DeleteCall(id string, terms map[string]int) error {
	c, err := t.Call(id)
	if err != nil || c == nil {
		return err
	}
	return deleteCallTx(t.b, c, terms)
}

// deleteCallTx deletes c with the postings of terms, those it is indexed with.
func deleteCallTx(tx *bbolt.Tx, c *data.Call, terms map[string]int) error {
	if err := materializeCallRefs(tx, c.ID); err != nil {
		return err
	}
	// Before its index entries go: a posting names the call through them.
	if err := setCallTerms(tx, c.WorkspaceID, c.ID, terms, nil); err != nil {
		return err
	}
	a := attrsOf(c)
	if err := moveCallIndexes(tx, c.WorkspaceID, c.ID, &a, nil); err != nil {
		return err
	}
	if err := adjustRollups(tx, c, -1); err != nil {
		return err
	}
	if err := moveOpenCall(tx, c, nil); err != nil {
		return err
	}
	if err := deleteCallAnalysis(tx, c); err != nil {
		return err
	}
	return tx.Bucket(bucketCalls).Delete([]byte(c.ID))
}

// deleteWorkspaceCalls removes every call of a deleted workspace with its indexes,
// counts, rollups and minutes (a cascade).
func deleteWorkspaceCalls(tx *bbolt.Tx, ws string) error {
	calls := tx.Bucket(bucketCalls)
	ix := callIndexOf(tx)
	for _, id := range ix.ids(ws) {
		if err := calls.Delete([]byte(id)); err != nil {
			return err
		}
		// The workspace's events go in the same transaction: nothing to materialize.
		if err := tx.Bucket(bucketCallEventRefs).Delete([]byte(id)); err != nil {
			return err
		}
	}
	if err := ix.dropWorkspace(ws); err != nil {
		return err
	}
	// Every scope of the workspace starts with its id, followed by "\x00" or "/".
	for _, b := range [][]byte{bucketCallScopeCounts, bucketCallRollups, bucketCallMinutes, bucketCallPostingDocs} {
		if err := deleteScopePrefix(tx.Bucket(b), ws); err != nil {
			return err
		}
	}
	return nil
}

// deleteScopePrefix deletes the keys "<ws>", "<ws>\x00…" and "<ws>/…" of b. Keys are collected
// first: deleting under a moving cursor can skip entries.
func deleteScopePrefix(b *bbolt.Bucket, ws string) error {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek([]byte(ws)); k != nil && bytes.HasPrefix(k, []byte(ws)); k, _ = c.Next() {
		if len(k) == len(ws) || k[len(ws)] == 0 || k[len(ws)] == '/' {
			keys = append(keys, append([]byte(nil), k...))
		}
	}
	return deleteKeys(b, keys)
}
