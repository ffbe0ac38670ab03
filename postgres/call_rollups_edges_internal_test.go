package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/rolluptest"
	"github.com/voiceapi/voiceapi/service"
)

// An edge hour's span is read row by row only when it holds fewer calls than the rest of
// its hour; otherwise it is the hour's rollup less the rest (as on bbolt). The default
// range ends now, with no call after it: its edge read every call of the current hour,
// and now reads none.
func TestAnalyticsEdgeHourReadsTheSmallerPart(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	const ws, agent = "ws_edges", "agt_edges"
	err := db.Update(ctx, func(tx service.Tx) error {
		for _, c := range rolluptest.Calls(ws, agent) {
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
		rolluptest.CheckEdges(t, "agent "+agentID, func(from, to time.Time, fn func(time.Time, data.CallRollup)) error {
			return db.View(ctx, func(stx service.Tx) error { return stx.(*tx).countCalls(ws, agentID, from, to, fn) })
		})
	}
}
