package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// windowEpoch is the time of the first event BenchEventWindow stores; event i is i
// milliseconds later.
var windowEpoch = time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)

// BenchEventWindow reads a time window at the start of a workspace of n events (one a
// millisecond): its first 100 milliseconds, 100 events. "audit" reads every page of an
// audit log filtered by that window (the audit's scan bound, service.MaxAuditScan, a
// page) and reports the pages it took; "replay" reads the window as a webhook replay
// does (service.EventReadTx.EventsBetween). It reports events_read, the events the
// storage handed over: before the window was a seek (schema 31, migration 0047), the
// audit's walk read every newer event, 40 pages of them, and the replay's as well. A store with a
// Settle method is settled once the events are stored.
func BenchEventWindow(b *testing.B, open Opener, n int) {
	s := open(b)
	g := stepIDs()
	for batch := 0; batch < n; batch += 1000 {
		update(b, s, func(tx service.Tx) error {
			for i := batch; i < min(batch+1000, n); i++ {
				e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: "ws_1", Type: data.EventAgentUpdated,
					CreatedAt: data.NewTime(windowEpoch.Add(time.Duration(i) * time.Millisecond)), Data: []byte(`{"n":1}`), Hash: "h", Actor: data.Actor{Type: "system"}}
				if err := tx.AppendEvent(e); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if settle, ok := s.(interface{ Settle(testing.TB) }); ok {
		settle.Settle(b)
	}
	from, to := windowEpoch, windowEpoch.Add(100*time.Millisecond)
	in := func(e *data.Event) bool { return !e.CreatedAt.Before(from) && e.CreatedAt.Before(to) }
	b.Run(fmt.Sprintf("audit_%d", n), func(b *testing.B) {
		pages, read := 0, 0
		for b.Loop() {
			pages, read = 0, 0
			found := 0
			req := data.PageRequest{PerPage: 100}
			for {
				var page data.Page
				view(b, s, func(tx service.Tx) error {
					keep := func(e *data.Event) bool { read++; return in(e) }
					f := service.EventFilter{Key: "window", Keep: keep, MaxScan: service.MaxAuditScan, From: from, To: to}
					list, p, err := tx.EventPage("ws_1", f, req)
					found += len(list)
					page = p
					return err
				})
				pages++
				if page.NextCursor == nil {
					break
				}
				req.Cursor = *page.NextCursor
			}
			if found != 100 {
				b.Fatalf("the window's pages held %d events, want 100", found)
			}
		}
		b.ReportMetric(float64(pages), "pages")
		b.ReportMetric(float64(read), "events_read")
	})
	b.Run(fmt.Sprintf("replay_%d", n), func(b *testing.B) {
		read := 0
		for b.Loop() {
			read = 0
			found := 0
			view(b, s, func(tx service.Tx) error {
				return tx.EventsBetween("ws_1", from, to, func(e *data.Event) (bool, error) {
					read++
					if in(e) {
						found++
					}
					return true, nil
				})
			})
			if found != 100 {
				b.Fatalf("the replay read %d events of the window, want 100", found)
			}
		}
		b.ReportMetric(float64(read), "events_read")
	})
}
