package postgres_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// The benchmarks share one database of VOICEAPI_BENCH_CALLS calls (default 100,000; the
// issue's figure is 1,000,000) in one workspace, spread over 30 days across 20 agents and
// 10 numbers, loaded with COPY (the derived tables recomputed from them) once per process.
var (
	benchOnce  sync.Once
	benchDB    *postgres.DB
	benchIDs   []string // newest first
	benchAgent string
)

const benchWS = "ws_01JD6BENCH00000000000000000"

func benchSetup(b *testing.B) {
	benchOnce.Do(func() {
		n := 100_000
		if s := os.Getenv("VOICEAPI_BENCH_CALLS"); s != "" {
			n, _ = strconv.Atoi(s)
		}
		// One top-level benchmark uses it: the database is dropped when that ends.
		db := testkit.OpenPostgres(b, nil)
		calls, agent := benchCalls(n)
		start := time.Now()
		for i := 0; i < len(calls); i += 100_000 {
			if err := postgres.CopyCalls(context.Background(), db, calls[i:min(i+100_000, len(calls))]); err != nil {
				b.Fatal(err)
			}
		}
		b.Logf("loaded %d calls in %v", n, time.Since(start).Round(time.Millisecond))
		benchIDs = make([]string, len(calls))
		for i, c := range calls {
			benchIDs[len(calls)-1-i] = c.ID
		}
		benchDB, benchAgent = db, agent
	})
	if benchDB == nil {
		b.Fatal("bench setup failed")
	}
}

// benchCalls makes n typical finished calls created evenly over the 30 days before a
// fixed end, oldest first, and names one of their agents.
func benchCalls(n int) ([]*data.Call, string) {
	end := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	from := end.Add(-30 * 24 * time.Hour)
	step := end.Sub(from) / time.Duration(n)
	at := from
	ids := &data.IDGen{Now: func() time.Time { return at }, Rand: rand.NewChaCha8([32]byte{1})}
	rng := rand.New(rand.NewPCG(3, 4))
	agents, numbers := make([]string, 20), make([]string, 10)
	for i := range agents {
		agents[i] = ids.New(data.PrefixAgent)
	}
	for i := range numbers {
		numbers[i] = ids.New(data.PrefixNumber)
	}
	reasons := []string{"user_hangup", "agent_hangup", "voicemail", "transfer", "inactivity"}
	calls := make([]*data.Call, n)
	for i := range calls {
		at = from.Add(time.Duration(i) * step)
		calls[i] = benchCall(ids.New(data.PrefixCall), at, agents[rng.IntN(len(agents))], numbers[rng.IntN(len(numbers))], rng, reasons)
	}
	return calls, agents[7]
}

// benchCall is a typical finished phone call: a short transcript, a few variables.
func benchCall(id string, at time.Time, agent, number string, rng *rand.Rand, reasons []string) *data.Call {
	created := data.NewTime(at)
	version, from, to := 1, "+14155550123", "+442071838750"
	c := &data.Call{
		ID: id, WorkspaceID: benchWS, AgentID: agent, AgentVersion: &version, NumberID: &number,
		Direction: []string{"inbound", "outbound"}[rng.IntN(2)], FromNumber: &from, ToNumber: &to,
		Status: data.CallEnded, CreatedAt: created, UpdatedAt: created,
		Transcript: []data.TranscriptItem{
			{Role: "agent", Content: "Hello, thanks for calling. How can I help?", StartMS: 0},
			{Role: "user", Content: "I'd like to move my appointment to Friday.", StartMS: 2100},
			{Role: "agent", Content: "Done: Friday at 10. Anything else?", StartMS: 5200},
			{Role: "user", Content: "No, thank you.", StartMS: 8000},
		},
		Variables: map[string]any{"customer": "Ada"}, Metadata: map[string]any{"crm_id": 42},
	}
	if rng.IntN(10) == 0 {
		c.Status = data.CallFailed
	}
	started := data.NewTime(at.Add(2 * time.Second))
	d := int64(30_000 + rng.IntN(300_000))
	ended := data.NewTime(started.Add(time.Duration(d) * time.Millisecond))
	c.StartedAt, c.EndedAt, c.DurationMS = &started, &ended, &d
	c.DisconnectionReason = &reasons[rng.IntN(len(reasons))]
	return c
}

// benchPage reads one page of 100 calls of f from req in a read transaction.
func benchPage(b *testing.B, f data.CallFilter, req data.PageRequest) {
	err := benchDB.View(context.Background(), func(tx service.Tx) error {
		list, _, err := tx.Calls(benchWS, nil, f, req)
		if err == nil && len(list) != req.PerPage {
			b.Fatalf("%d calls, want %d", len(list), req.PerPage)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCallPages reads the newest page of 100 calls and a page 99% deep, unfiltered
// and by agent: keyset pages cost the same at any depth (the target: a deep page
// within 1.2x the first at 1,000,000 calls).
func BenchmarkCallPages(b *testing.B) {
	benchSetup(b)
	deep := postgres.CallsCursor(benchDB, benchWS, benchIDs[len(benchIDs)*99/100-100])
	for _, tc := range []struct {
		name string
		f    data.CallFilter
		req  data.PageRequest
	}{
		{"first", data.CallFilter{}, data.PageRequest{PerPage: 100}},
		{"deep", data.CallFilter{}, data.PageRequest{PerPage: 100, Cursor: deep}},
		{"agent_first", data.CallFilter{AgentID: benchAgent}, data.PageRequest{PerPage: 100}},
		{"status_direction_first", data.CallFilter{Status: data.CallFailed, Direction: data.DirectionInbound}, data.PageRequest{PerPage: 100}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				benchPage(b, tc.f, tc.req)
			}
		})
	}
	// Last, as it adds calls: one call's write with its counts, rollups and minutes.
	b.Run("insert", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(5, 6))
		ids := data.NewIDGen()
		for b.Loop() {
			c := benchCall(ids.New(data.PrefixCall), time.Now(), benchAgent, "num_01JD6BENCH00000000000000000", rng, []string{"user_hangup"})
			if err := benchDB.Update(context.Background(), func(tx service.Tx) error { return tx.InsertCall(c) }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
