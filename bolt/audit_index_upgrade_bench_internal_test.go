package bolt

import (
	"context"
	"fmt"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkUpgradeListsEventFacets times the schema 26 → 27 fill (listEventFacetsOfStore)
// over n events of 5 workspaces, 10 types and 20 users (one in ten caused by no user): it
// runs at open, in the migration's one transaction (docs/performance.md, "Schema 27's
// fill at open").
func BenchmarkUpgradeListsEventFacets(b *testing.B) {
	g := data.NewIDGen()
	benchUpgrade(b, []int{10_000, 100_000}, bucketEventsByFacet, listEventFacetsOfStore, func(tx service.Tx, j int) error { // as a schema 26 file: no facets
		e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: fmt.Sprintf("ws_%d", j%5), Type: data.EventTypes[j%10],
			Actor: data.Actor{Type: "user", UserID: fmt.Sprintf("usr_01JD60000000000000000%05d", j%20)},
			Data:  []byte(`{"id":"agt_1","name":"Support desk"}`), Hash: fmt.Sprintf("k1:%064x", j)}
		if j%10 == 0 {
			e.Actor = data.Actor{Type: "system"}
		}
		return tx.AppendEvent(e)
	})
}

// benchUpgrade runs an upgrade benchmark for each size n: a fresh file (NoSync) given n
// records by put (j from 0 to n-1, a thousand a transaction), then benchFill of bucket.
func benchUpgrade(b *testing.B, sizes []int, bucket []byte, fill func(*bbolt.Tx) error, put func(tx service.Tx, j int) error) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			db, err := Open(b.TempDir(), Options{NoSync: true, SecretKey: make([]byte, 32)})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			for i := 0; i < n; i += 1000 {
				if err := db.Update(context.Background(), func(tx service.Tx) error {
					for j := i; j < min(i+1000, n); j++ {
						if err := put(tx, j); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			benchFill(b, db, bucket, fill)
		})
	}
}

// benchFill times an upgrade's fill of bucket (a migration step, fill) over db's records,
// the bucket emptied before each run, untimed: as the file before the step left it.
func benchFill(b *testing.B, db *DB, bucket []byte, fill func(*bbolt.Tx) error) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if err := db.bolt.Update(func(tx *bbolt.Tx) error {
			if err := tx.DeleteBucket(bucket); err != nil {
				return err
			}
			_, err := tx.CreateBucket(bucket)
			return err
		}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := db.bolt.Update(fill); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpgradeListsEventAgents times the schema 28 → 29 fill (listEventAgentsOfStore)
// over n events of 5 workspaces, 10 types and 20 agents: each event read whole and given
// its agent by service.EventAgent, in the migration's one transaction at open
// (docs/performance.md, "Schema 29's fill at open").
func BenchmarkUpgradeListsEventAgents(b *testing.B) {
	g := data.NewIDGen()
	benchUpgrade(b, []int{10_000, 100_000}, bucketEventsByFacet, listEventAgentsOfStore, func(tx service.Tx, j int) error {
		typ := []string{data.EventAgentUpdated, data.EventCallEnded, data.EventCampaignStarted, data.EventTestRunCompleted, data.EventJobFailed,
			data.EventKnowledgeBaseCreated, data.EventNumberUpdated, data.EventAPIKeyCreated, data.EventUserLogin, data.EventAgentPublished}[j%10]
		agent := fmt.Sprintf("agt_01JD60000000000000000%05d", j%20)
		e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: fmt.Sprintf("ws_%d", j%5), Type: typ, Actor: data.Actor{Type: "system"},
			Data: []byte(`{"id":"` + agent + `","agent_id":"` + agent + `","name":"Support desk"}`), Hash: fmt.Sprintf("k1:%064x", j)}
		return tx.AppendEvent(e)
	})
}
