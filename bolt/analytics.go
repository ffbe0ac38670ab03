package bolt

import (
	"bytes"
	"encoding/binary"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Rollups hold, per workspace and per workspace and agent, the counts of the calls created
// in each UTC hour: key "<scope>\x00<hour as 8 bytes>", scope "<ws>" or "<ws>/a/<agent>".
// A call's register, update and delete adjust its hour in the same transaction, so
// analytics read at most one entry per hour of the range, never the calls themselves;
// only the partial hours at the edges of a range are counted from the calls there.
var bucketCallRollups = []byte("call_rollups")

func rollupKey(scope string, hour int64) []byte {
	k := make([]byte, 0, len(scope)+9)
	k = append(k, scope...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint64(k, uint64(hour))
}

func hourOf(t time.Time) int64 { return t.Unix() / 3600 }

// adjustRollups adds sign times c's contribution to the hour c was created in, for its
// workspace and its agent.
func adjustRollups(tx *bbolt.Tx, c *data.Call, sign int64) error {
	b := tx.Bucket(bucketCallRollups)
	hour := hourOf(c.CreatedAt.Time)
	delta := data.RollupOf(c)
	for i, scope := range []string{c.WorkspaceID, callAgentScope(c.WorkspaceID, c.AgentID)} {
		delta := delta
		if i == 0 {
			delta = delta.WithoutVersions() // versions are numbered per agent
		}
		key := rollupKey(scope, hour)
		var r data.CallRollup
		if _, err := getJSON(b, key, &r); err != nil {
			return err
		}
		r.Add(delta, sign)
		if r.Calls <= 0 {
			if err := b.Delete(key); err != nil {
				return err
			}
			continue
		}
		if err := putJSON(b, key, r); err != nil {
			return err
		}
	}
	return nil
}

// CallRollups implements service.CallTx: whole hours come from the rollups, the partial
// hours at either edge of the range from their calls (data.SumCallRollups).
func (t tx) CallRollups(ws, agentID string, from, to time.Time, step time.Duration) ([]data.CallBucket, error) {
	scope := ws
	if agentID != "" {
		scope = callAgentScope(ws, agentID)
	}
	hours := func(from, to time.Time, fn func(time.Time, data.CallRollup)) error {
		return readRollups(t.b, scope, from, to, fn)
	}
	edges := func(from, to time.Time, fn func(time.Time, data.CallRollup)) error {
		return countCalls(t.b, scope, from, to, fn)
	}
	return data.SumCallRollups(from, to, step, hours, edges)
}

// readRollups feeds the rollups of scope for the hours in [from, to).
func readRollups(tx *bbolt.Tx, scope string, from, to time.Time, fn func(time.Time, data.CallRollup)) error {
	c := tx.Bucket(bucketCallRollups).Cursor()
	end := rollupKey(scope, hourOf(to))
	for k, v := c.Seek(rollupKey(scope, hourOf(from))); k != nil && bytes.Compare(k, end) < 0; k, v = c.Next() {
		var r data.CallRollup
		if err := jsonUnmarshal(v, &r); err != nil {
			return err
		}
		hour := int64(binary.BigEndian.Uint64(k[len(k)-8:]))
		fn(time.Unix(hour*3600, 0).UTC(), r)
	}
	return nil
}

// countCalls feeds the calls of scope created in [from, to), a span within one hour at an
// edge of the range, under that hour. Decoding a call costs its whole record (transcript
// and all), so the span is decoded only when it holds fewer calls than the rest of its
// hour; otherwise the answer is the hour's rollup less the rest. The current hour's span
// ends at now, with no call after it: a default range decodes none, however busy the hour.
func countCalls(tx *bbolt.Tx, scope string, from, to time.Time, fn func(time.Time, data.CallRollup)) error {
	c := callIndexOf(tx).cursor(scope)
	if c == nil {
		return nil // no call was ever in scope
	}
	hour := from.Truncate(time.Hour)
	rest := callIDsIn(c, hour, from, -1)
	rest = append(rest, callIDsIn(c, to, hour.Add(time.Hour), -1)...)
	span := callIDsIn(c, from, to, len(rest)+1)
	if len(span) <= len(rest) {
		return decodeCalls(tx, span, func(r data.CallRollup) { fn(hour, r) })
	}
	var sum data.CallRollup
	found, err := getJSON(tx.Bucket(bucketCallRollups), rollupKey(scope, hourOf(hour)), &sum)
	if err != nil || !found {
		return err
	}
	agent := strings.Contains(scope, "/a/")
	err = decodeCalls(tx, rest, func(r data.CallRollup) {
		if !agent {
			r = r.WithoutVersions() // as the workspace's rollups: versions are numbered per agent
		}
		sum.Add(r, -1)
	})
	if err != nil || sum.Calls <= 0 {
		return err
	}
	fn(hour, sum)
	return nil
}

// callIDsIn is the ids under c of the calls created in [from, to), at most limit of them
// (all when limit is negative): index keys only, no record read.
func callIDsIn(c *indexCursor, from, to time.Time, limit int) []string {
	var ids []string
	end := data.IDBound(data.PrefixCall, to)
	for id, ok := c.atOrAfter(data.IDBound(data.PrefixCall, from)); ok && id < end && len(ids) != limit; id, ok = c.next() {
		ids = append(ids, id)
	}
	return ids
}

// decodeCalls feeds the rollup of each call of ids still stored.
func decodeCalls(tx *bbolt.Tx, ids []string, fn func(data.CallRollup)) error {
	calls := tx.Bucket(bucketCalls)
	for _, id := range ids {
		var call data.Call
		found, err := getJSON(calls, []byte(id), &call)
		if err != nil {
			return err
		}
		if found {
			fn(data.RollupOf(&call))
		}
	}
	return nil
}
