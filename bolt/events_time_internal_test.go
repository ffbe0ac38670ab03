package bolt

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// A schema 30 file listed no event by its chain time. Opening it (schema 31) lists every
// stored event, of every workspace, as an append would have, with each workspace's clock
// (its lag from a clock that stepped back), in the opening transaction; a window then
// reads what the plain walk keeps. An event appended below its workspace's newest id
// afterwards (out of id order) leaves that workspace's windows unbounded, still right.
func TestEventsOfAnOlderFileAreListedByTime(t *testing.T) {
	db, dir, opts := openFile(t)
	t0 := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	clock := []int{0, 4, 2, 2, 9, 1, 10} // steps back twice: lag 8
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		for i, ms := range clock {
			for _, ws := range []string{"ws_1", "ws_2"} {
				e := &data.Event{ID: fmt.Sprintf("evt_%03d%s", i, ws[3:]), WorkspaceID: ws, Type: data.EventAgentUpdated, CreatedAt: data.NewTime(at(ms)),
					Actor: data.Actor{Type: "system"}, Data: []byte(`{"id":"agt_1"}`), Hash: fmt.Sprint("h", i)}
				if ws == "ws_2" {
					e.CreatedAt = data.NewTime(at(i))
				}
				if err := tx.AppendEvent(e); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	appended := timeEntries(t, db)
	if c := appended[string(bucketEventClocks)+"/ws_1"]; !bytes.Equal(c[8:16], []byte{0, 0, 0, 0, 0, 0, 0, 8}) {
		t.Fatalf("ws_1's clock at append %x; want a lag of 8 ms", c)
	}
	db = asOlderFile(t, db, dir, opts, 30, bucketEventsByTime, bucketEventClocks)
	defer db.Close()
	if got := timeEntries(t, db); !mapsEqual(got, appended) {
		t.Errorf("after the upgrade the time list and clocks are\n%v\nwant them as appended:\n%v", got, appended)
	}
	var bounds []time.Time
	for ms := -1; ms <= 12; ms++ {
		bounds = append(bounds, at(ms))
	}
	storetest.ExpectWindowsAsTheWalk(t, db, "ws_1", bounds)
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		return tx.AppendEvent(&data.Event{ID: "evt_0035", WorkspaceID: "ws_1", Type: data.EventAgentUpdated, CreatedAt: data.NewTime(at(3)),
			Actor: data.Actor{Type: "system"}, Hash: "h-late"})
	}); err != nil {
		t.Fatal(err)
	}
	storetest.ExpectWindowsAsTheWalk(t, db, "ws_1", bounds) // an event out of id order
}

// timeEntries is the time list's keys and the clocks, by bucket and key.
func timeEntries(t *testing.T, db *DB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	if err := db.bolt.View(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketEventsByTime, bucketEventClocks} {
			if err := tx.Bucket(name).ForEach(func(k, v []byte) error {
				out[string(name)+"/"+string(k)] = bytes.Clone(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func mapsEqual(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// BenchmarkUpgradeListsEventTimes times the schema 30 → 31 fill (listEventTimesOfStore)
// over n events of 5 workspaces: each event's header read, in the migration's one
// transaction at open (docs/performance.md, "A time window of events").
func BenchmarkUpgradeListsEventTimes(b *testing.B) {
	g := data.NewIDGen()
	benchUpgrade(b, []int{100_000}, bucketEventsByTime, listEventTimesOfStore, func(tx service.Tx, j int) error {
		e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: fmt.Sprintf("ws_%d", j%5), Type: data.EventAgentUpdated, Actor: data.Actor{Type: "system"},
			CreatedAt: data.NewTime(time.Now()), Data: []byte(`{"id":"agt_1","name":"Support desk"}`), Hash: fmt.Sprintf("k1:%064x", j)}
		return tx.AppendEvent(e)
	})
}
