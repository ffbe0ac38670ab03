// Package rolluptest holds the cases both engines' tests of an analytics edge hour run
// (TestAnalyticsEdgeHourReadsTheSmallerPart in bolt and postgres).
package rolluptest

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// Start is the hour the calls of Calls are created in.
var Start = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// Calls are 50 calls of agent in workspace ws, at 10:00:30, 10:01:30, ... 10:49:30, one in
// two ended after a second.
func Calls(ws, agent string) []*data.Call {
	var out []*data.Call
	for i := range 50 {
		at := Start.Add(time.Duration(i)*time.Minute + 30*time.Second)
		ids := &data.IDGen{Now: func() time.Time { return at }, Rand: rand.Reader}
		id := ids.New(data.PrefixCall)
		c := &data.Call{ID: id, WorkspaceID: ws, AgentID: agent, Direction: data.DirectionWeb, Status: data.CallRegistered,
			CreatedAt: data.NewTime(data.IDTime(data.PrefixCall, id)), UpdatedAt: data.NewTime(at)}
		if i%2 == 1 {
			ms := int64(1000)
			c.Status, c.DurationMS = data.CallEnded, &ms
		}
		out = append(out, c)
	}
	return out
}

// Count is an engine's count of the calls of a scope created in [from, to), a span
// within one hour: the edges of data.SumCallRollups.
type Count func(from, to time.Time, fn func(time.Time, data.CallRollup)) error

// CheckEdges holds count, over the calls of Calls, to the sums and to the number of
// feeds: one (the hour's rollup less the rest) whenever the span holds more calls than
// the rest of its hour, one per call otherwise. Decoding every call of a span was one
// feed each.
func CheckEdges(t *testing.T, scope string, count Count) {
	t.Helper()
	for _, tc := range []struct {
		name            string
		from, to        time.Duration // after Start
		feeds, calls    int64
		ended, duration int64
	}{
		{"now's edge: nothing after it", 0, 50*time.Minute + 10*time.Second, 1, 50, 25, 25000},
		{"a from edge: 5 calls before it", 5 * time.Minute, time.Hour, 1, 45, 23, 23000},
		{"a short span: read whole", 0, 3 * time.Minute, 3, 3, 1, 1000},
		{"a span inside the hour", 10 * time.Minute, 40 * time.Minute, 1, 30, 15, 15000},
	} {
		var feeds int64
		var sum data.CallRollup
		err := count(Start.Add(tc.from), Start.Add(tc.to), func(hour time.Time, r data.CallRollup) {
			if !hour.Equal(Start) {
				t.Errorf("%s: fed under %v", tc.name, hour)
			}
			feeds++
			sum.Add(r, 1)
		})
		if err != nil {
			t.Fatal(err)
		}
		if feeds != tc.feeds || sum.Calls != tc.calls || sum.Ended != tc.ended || sum.DurationMS != tc.duration {
			t.Errorf("%s (%s): %d feeds, %d calls, %d ended, %d ms; want %d, %d, %d, %d", tc.name, scope, feeds, sum.Calls, sum.Ended, sum.DurationMS, tc.feeds, tc.calls, tc.ended, tc.duration)
		}
	}
}
