package service_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// benchTranscript is twenty turns of about 100 bytes, one holding a card number and one a
// phone number read digit by digit.
func benchTranscript() []data.TranscriptItem {
	items := make([]data.TranscriptItem, 20)
	for i := range items {
		items[i] = data.TranscriptItem{Role: "user", Content: fmt.Sprintf("turn %d: I would like to change the delivery address of my order please, thanks", i)}
	}
	items[5].Content = "sure, the card is 4242 4242 4242 4242, expiry oh nine twenty nine"
	items[9].Content = "call me back on four one five five five five zero one nine nine"
	return items
}

// BenchmarkRegisterCall registers calls with a twenty-turn transcript, without and with a
// workspace redaction setting of every detector and two rules: the difference is what
// redaction adds to a register (reading the two settings, applying them).
func BenchmarkRegisterCall(b *testing.B) {
	for _, redacted := range []bool{false, true} {
		b.Run(fmt.Sprintf("redaction=%v", redacted), func(b *testing.B) {
			e := newCallsEnvB(b)
			if redacted {
				red := data.Redaction{Detectors: []string{"card", "email", "phone", "iban", "ssn"},
					Rules: []data.RedactionRule{{Name: "order_id", Pattern: `ORD-\d{6}`}, {Name: "badge", Pattern: `B-\d{4}`}}}
				if _, err := e.svc.Workspaces.UpdateWorkspace(e.owner, e.ws, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{Redaction: data.Some(red)})}); err != nil {
					b.Fatal(err)
				}
			}
			in := data.CallCreate{AgentID: e.a, Direction: data.DirectionWeb, Transcript: benchTranscript(),
				Variables: map[string]any{"name": "Ann", "order": "ORD-123456"}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// A millisecond a call, as a real clock spreads them: calls sharing one
				// millisecond take the index's slow path (docs/performance.md).
				e.now = e.now.Add(time.Millisecond)
				if _, err := e.svc.Calls.RegisterCall(e.owner, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWriterDuringSweep measures the latency of call registers made while a sweep
// deletes 5,000 expired calls (sweep=true) and without one: the writer waits for at most
// one batch. It reports the p50, p99 and max of the registers made (one per iteration).
func BenchmarkWriterDuringSweep(b *testing.B) {
	for _, sweep := range []bool{false, true} {
		b.Run(fmt.Sprintf("sweep=%v", sweep), func(b *testing.B) {
			e := newCallsEnvB(b)
			if _, err := e.svc.Workspaces.UpdateWorkspace(e.owner, e.ws, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{RetentionDays: data.Some(days(1))})}); err != nil {
				b.Fatal(err)
			}
			in := data.CallCreate{AgentID: e.b, Direction: data.DirectionWeb, Transcript: benchTranscript()}
			for i := 0; i < 5000; i++ {
				if _, err := e.svc.Calls.RegisterCall(e.owner, in); err != nil {
					b.Fatal(err)
				}
			}
			e.now = e.now.Add(48 * time.Hour)
			done := make(chan struct{})
			if sweep {
				go func() { defer close(done); e.svc.Retention.Sweep(context.Background()) }()
			} else {
				close(done)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := e.svc.Calls.RegisterCall(e.owner, in); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			<-done
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
		})
	}
}

// newCallsEnvB is newCallsEnv for benchmarks: a workspace with agents A and B on an
// injected clock.
func newCallsEnvB(tb testing.TB) *callsEnv {
	tb.Helper()
	e := &callsEnv{now: time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)}
	clock := func() time.Time { return e.now }
	e.db = testkit.New(tb, func(o *bolt.Options) { o.Now = clock }).Store
	e.svc = cli.NewServices(e.db)
	u := (&testkit.Env{Store: e.db, Svc: e.svc}).User(tb, "owner@example.com")
	e.owner, e.ws = testkit.As(u), u.PersonalWorkspaceID
	for _, name := range []string{"A", "B"} {
		a, err := e.svc.Agents.CreateAgent(e.owner, data.AgentCreate{Name: data.Some(name)})
		if err != nil {
			tb.Fatal(err)
		}
		e.a, e.b = e.b, a.ID
	}
	return e
}
