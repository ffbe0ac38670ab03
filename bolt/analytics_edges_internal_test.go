package bolt

import (
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// An edge hour's span is read call by call only when it holds fewer calls than the rest
// of its hour; otherwise it is the hour's rollup less the rest. The default range ends
// now, with no call after it: its edge decoded every call of the current hour (100,000
// calls of a busy hour took 8 to 16 s a request on the walk of a big workspace), and now
// decodes none. Feeds are counted: without the fix each call of a span was one feed.
func TestAnalyticsEdgeHourReadsTheSmallerPart(t *testing.T) {
	start := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	c := &clock{start}
	db := openInternal(t, c)
	ctx, ws := ownerCtx(t, db, "a@example.com")
	agent := newTestAgent(t, db, ws)
	for i := range 50 { // 10:00:30, 10:01:30, ... 10:49:30
		c.t = start.Add(time.Duration(i)*time.Minute + 30*time.Second)
		in := data.CallCreate{AgentID: agent, Direction: "web"}
		if i%2 == 1 {
			in.Status, in.DurationMS = ptr("ended"), ptr(int64(1000))
		}
		if _, err := svcOf(db).Calls.RegisterCall(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	for _, scope := range []string{ws, callAgentScope(ws, agent)} {
		for _, tc := range []struct {
			name            string
			from, to        time.Duration // after 10:00
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
			err := db.bolt.View(func(tx *bbolt.Tx) error {
				return countCalls(tx, scope, start.Add(tc.from), start.Add(tc.to), func(hour time.Time, r data.CallRollup) {
					if !hour.Equal(start) {
						t.Errorf("%s: fed under %v", tc.name, hour)
					}
					feeds++
					sum.Add(r, 1)
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if feeds != tc.feeds || sum.Calls != tc.calls || sum.Ended != tc.ended || sum.DurationMS != tc.duration {
				t.Errorf("%s (%s): %d feeds, %d calls, %d ended, %d ms; want %d, %d, %d, %d", tc.name, scope, feeds, sum.Calls, sum.Ended, sum.DurationMS, tc.feeds, tc.calls, tc.ended, tc.duration)
			}
		}
	}
}
