package bolt

import (
	"bytes"
	"encoding/binary"
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

// rollup is the contribution of some calls to one hour.
type rollup struct {
	Calls        int64            `json:"c"`
	Ended        int64            `json:"e,omitempty"`
	Failed       int64            `json:"f,omitempty"`
	DurationMS   int64            `json:"d,omitempty"`
	WithDuration int64            `json:"n,omitempty"` // calls that have a duration
	Reasons      map[string]int64 `json:"r,omitempty"`
}

func contribution(c *data.Call) rollup {
	r := rollup{Calls: 1}
	switch c.Status {
	case data.CallEnded:
		r.Ended = 1
	case data.CallFailed:
		r.Failed = 1
	}
	if c.DurationMS != nil {
		r.DurationMS, r.WithDuration = *c.DurationMS, 1
	}
	if c.DisconnectionReason != nil {
		r.Reasons = map[string]int64{*c.DisconnectionReason: 1}
	}
	return r
}

// add adds sign times o to r.
func (r *rollup) add(o rollup, sign int64) {
	r.Calls += sign * o.Calls
	r.Ended += sign * o.Ended
	r.Failed += sign * o.Failed
	r.DurationMS += sign * o.DurationMS
	r.WithDuration += sign * o.WithDuration
	for k, v := range o.Reasons {
		if r.Reasons == nil {
			r.Reasons = map[string]int64{}
		}
		r.Reasons[k] += sign * v
		if r.Reasons[k] == 0 {
			delete(r.Reasons, k)
		}
	}
}

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
	delta := contribution(c)
	for _, scope := range []string{c.WorkspaceID, callAgentScope(c.WorkspaceID, c.AgentID)} {
		key := rollupKey(scope, hour)
		var r rollup
		if _, err := getJSON(b, key, &r); err != nil {
			return err
		}
		r.add(delta, sign)
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
// hours at either edge of the range from their calls.
func (t tx) CallRollups(ws, agentID string, from, to time.Time, step time.Duration) ([]data.CallBucket, error) {
	scope := ws
	if agentID != "" {
		scope = callAgentScope(ws, agentID)
	}
	from, to = from.UTC(), to.UTC()
	if !from.Before(to) || step <= 0 {
		return nil, nil
	}
	first := from.Truncate(step)
	sums := make([]rollup, (to.Sub(first)+step-1)/step) // one per bucket the range touches
	add := func(hourStart time.Time, r rollup) {
		i := int(hourStart.Sub(first) / step)
		if i < 0 || i >= len(sums) {
			return
		}
		if sums[i].Calls == 0 {
			sums[i] = r // the first hour of a bucket is taken as decoded, reasons and all
			return
		}
		sums[i].add(r, 1)
	}
	fullFrom := from.Truncate(time.Hour)
	if fullFrom.Before(from) {
		fullFrom = fullFrom.Add(time.Hour)
	}
	fullTo := to.Truncate(time.Hour)
	if fullFrom.Before(fullTo) {
		if err := readRollups(t.b, scope, fullFrom, fullTo, add); err != nil {
			return nil, err
		}
		if err := countCalls(t.b, scope, from, fullFrom, add); err != nil {
			return nil, err
		}
		if err := countCalls(t.b, scope, fullTo, to, add); err != nil {
			return nil, err
		}
	} else if err := countCalls(t.b, scope, from, to, add); err != nil {
		return nil, err
	}
	n := 0
	for i := range sums {
		if sums[i].Calls > 0 {
			n++
		}
	}
	out := make([]data.CallBucket, 0, n)
	for i, r := range sums {
		if r.Calls == 0 {
			continue
		}
		out = append(out, data.CallBucket{
			Start: first.Add(time.Duration(i) * step), Calls: r.Calls, Ended: r.Ended, Failed: r.Failed,
			DurationMS: r.DurationMS, WithDuration: r.WithDuration, Reasons: r.Reasons,
		})
	}
	return out, nil
}

// readRollups feeds the rollups of scope for the hours in [from, to).
func readRollups(tx *bbolt.Tx, scope string, from, to time.Time, fn func(time.Time, rollup)) error {
	c := tx.Bucket(bucketCallRollups).Cursor()
	end := rollupKey(scope, hourOf(to))
	for k, v := c.Seek(rollupKey(scope, hourOf(from))); k != nil && bytes.Compare(k, end) < 0; k, v = c.Next() {
		var r rollup
		if err := jsonUnmarshal(v, &r); err != nil {
			return err
		}
		hour := int64(binary.BigEndian.Uint64(k[len(k)-8:]))
		fn(time.Unix(hour*3600, 0).UTC(), r)
	}
	return nil
}

// countCalls feeds the calls of scope created in [from, to), a span within one hour at an
// edge of the range, each under the hour it was created in.
func countCalls(tx *bbolt.Tx, scope string, from, to time.Time, fn func(time.Time, rollup)) error {
	if !from.Before(to) {
		return nil
	}
	idx := tx.Bucket(bucketCallsIndex).Cursor()
	calls := tx.Bucket(bucketCalls)
	prefix := indexKey(scope, "")
	end := indexKey(scope, idBound(data.PrefixCall, to))
	for k, _ := idx.Seek(indexKey(scope, idBound(data.PrefixCall, from))); k != nil && bytes.HasPrefix(k, prefix) && bytes.Compare(k, end) < 0; k, _ = idx.Next() {
		var c data.Call
		found, err := getJSON(calls, k[len(prefix):], &c)
		if err != nil {
			return err
		}
		if found {
			fn(c.CreatedAt.Truncate(time.Hour), contribution(&c))
		}
	}
	return nil
}
