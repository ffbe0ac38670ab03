package postgres

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// An edge hour's span is read row by row only when it holds fewer calls than the rest of
// its hour; otherwise it is the hour's rollup less the rest (as on bbolt:
// TestAnalyticsEdgeHourReadsTheSmallerPart). The default range ends now, with no call
// after it: its edge read every call of the current hour, and now reads none. Feeds are
// counted: without the fix each call of a span was one feed.
func TestAnalyticsEdgeHourReadsTheSmallerPart(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	start := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	const ws, agent = "ws_edges", "agt_edges"
	err := db.Update(ctx, func(tx service.Tx) error {
		for i := range 50 { // 10:00:30, 10:01:30, ... 10:49:30
			at := start.Add(time.Duration(i)*time.Minute + 30*time.Second)
			ids := &data.IDGen{Now: func() time.Time { return at }, Rand: rand.Reader}
			id := ids.New(data.PrefixCall)
			c := &data.Call{ID: id, WorkspaceID: ws, AgentID: agent, Direction: data.DirectionWeb, Status: data.CallRegistered,
				CreatedAt: data.NewTime(data.IDTime(data.PrefixCall, id)), UpdatedAt: data.NewTime(at)}
			if i%2 == 1 {
				c.Status, c.DurationMS = data.CallEnded, ptrTo(int64(1000))
			}
			if err := tx.InsertCall(c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, agentID := range []string{"", agent} {
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
			err := db.View(ctx, func(stx service.Tx) error {
				return stx.(*tx).countCalls(ws, agentID, start.Add(tc.from), start.Add(tc.to), func(hour time.Time, r data.CallRollup) {
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
				t.Errorf("%s (agent %q): %d feeds, %d calls, %d ended, %d ms; want %d, %d, %d, %d", tc.name, agentID, feeds, sum.Calls, sum.Ended, sum.DurationMS, tc.feeds, tc.calls, tc.ended, tc.duration)
			}
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
