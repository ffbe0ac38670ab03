package bolt

import (
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/rolluptest"
)

// An edge hour's span is read call by call only when it holds fewer calls than the rest
// of its hour; otherwise it is the hour's rollup less the rest. The default range ends
// now, with no call after it: its edge decoded every call of the current hour (100,000
// calls of a busy hour took 8 to 16 s a request on the walk of a big workspace), and now
// decodes none.
func TestAnalyticsEdgeHourReadsTheSmallerPart(t *testing.T) {
	db := openInternal(t, &clock{rolluptest.Start})
	const ws, agent = "ws_edges", "agt_edges"
	err := db.bolt.Update(func(tx *bbolt.Tx) error {
		for _, c := range rolluptest.Calls(ws, agent) {
			if err := insertCall(tx, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{ws, callAgentScope(ws, agent)} {
		rolluptest.CheckEdges(t, scope, func(from, to time.Time, fn func(time.Time, data.CallRollup)) error {
			return db.bolt.View(func(tx *bbolt.Tx) error { return countCalls(tx, scope, from, to, fn) })
		})
	}
}
