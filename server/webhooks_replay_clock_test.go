package server_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
)

// A replay queues every event created in its range, a clock that stepped back among them
// too: an event recorded in the range, then one recorded after the clock stepped back to
// before the range, then one in the range again. The walk from the newest event stopped at
// the first one older than from and left out the oldest of the range.
func TestReplayRangeAfterTheClockSteppedBack(t *testing.T) {
	var offset atomic.Int64
	e := newEnvWith(t, func(o *bolt.Options) {
		o.Now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	})
	rc := newReceiver(t, nil)
	id, secret := createWebhook(t, e, e.Owner.Token, rc.srv.URL, data.EventWorkspaceUpdated)
	rc.setSecret(secret)
	from := time.Now().Add(-time.Second)
	for i, step := range []time.Duration{0, -10 * time.Minute, 0} {
		offset.Store(int64(step))
		touchWorkspace(t, e, e.Owner, fmt.Sprint("n", i))
	}
	r := e.do("POST", "/api/v1/webhooks/"+id+"/replay", e.Owner.Token, map[string]any{"from": from.Format(time.RFC3339Nano), "to": time.Now().Add(time.Minute).Format(time.RFC3339Nano)})
	expect(t, r, 202)
	if r.Data()["count"] != 2.0 {
		t.Fatalf("replay queued %v events, want the 2 created in the range: %s", r.Data()["count"], r.Body)
	}
}
