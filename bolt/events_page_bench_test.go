package bolt_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// BenchmarkEventPageFiltered is an audit page whose filter only the oldest of 20,000
// events matches (its type): filtered_rare checks each event (as a time range or a
// limited caller still does), decodes service.MaxAuditScan events and answers an empty
// page with a cursor; type_rare walks the type's entries (events_by_facet) to the one;
// unfiltered is the page of 15 without a filter, for scale.
// docs/performance.md ("Every list page's cost whatever the history") records the figures.
func BenchmarkEventPageFiltered(b *testing.B) {
	db := openTestDB(b)
	ctx := context.Background()
	const n = 20000
	for batch := 0; batch < n; batch += 1000 {
		if err := db.Update(ctx, func(tx service.Tx) error {
			for i := batch; i < batch+1000; i++ {
				head, err := tx.EventHead("ws_1")
				if err != nil {
					return err
				}
				typ := data.EventAgentCreated
				if i == 0 {
					typ = data.EventAgentDeleted
				}
				id := fmt.Sprintf("evt_%09d", i)
				if err := tx.AppendEvent(&data.Event{ID: id, Type: typ, WorkspaceID: "ws_1", Data: []byte(`{"n":1}`), PrevHash: head, Hash: "h-" + id}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	rare := func(e *data.Event) bool { return e.Type == data.EventAgentDeleted }
	for _, c := range []struct {
		name string
		f    service.EventFilter
		want int
	}{
		{"filtered_rare", service.EventFilter{Key: "rare", Keep: rare, MaxScan: service.MaxAuditScan}, 0},
		{"type_rare", service.EventFilter{Key: "rare", Keep: rare, MaxScan: service.MaxAuditScan, Type: data.EventAgentDeleted}, 1},
		{"unfiltered", service.EventFilter{}, 15},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := db.View(ctx, func(tx service.Tx) error {
					list, _, err := tx.EventPage("ws_1", c.f, data.PageRequest{PerPage: 15})
					if err == nil && len(list) != c.want {
						err = fmt.Errorf("page of %d, want %d", len(list), c.want)
					}
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEventPageOfSomeAgents: the first audit page of a caller limited to 1, 5 or 20
// agents past 20,000 events of another agent (docs/performance.md, "A limited caller's
// audit page").
func BenchmarkEventPageOfSomeAgents(b *testing.B) {
	storetest.BenchEventPageOfSomeAgents(b, testkit.OpenStore)
}

// BenchmarkEventPageOfSomeTypes: the first audit page of a caller who sees every agent but
// not every type past 20,000 call events it may not read (docs/performance.md, "A
// limited caller's audit page").
func BenchmarkEventPageOfSomeTypes(b *testing.B) {
	storetest.BenchEventPageOfSomeTypes(b, testkit.OpenStore)
}

// BenchmarkEventPageOfSomeKinds: the first audit page of a caller who reads some job kinds
// past 20,000 job.failed events of a kind it may not read (docs/performance.md, "A limited
// caller's audit page").
func BenchmarkEventPageOfSomeKinds(b *testing.B) {
	storetest.BenchEventPageOfSomeKinds(b, testkit.OpenStore)
}

// BenchmarkEventWindow: an audit log and a webhook replay of a window at the start of
// 200,000 events (docs/performance.md, "A time window of events").
func BenchmarkEventWindow(b *testing.B) {
	storetest.BenchEventWindow(b, testkit.OpenStore, 200000)
}
