package bolt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/fakecalls"
)

// The benchmarks share one database of VOICEAPI_BENCH_CALLS calls (default 1,000,000) in
// one workspace, spread over the 30 days before benchEnd across 20 agents. It is built
// once per process through insertCall, the path every registered call takes, in large
// transactions with fsync off.
var (
	benchOnce  sync.Once
	benchDB    *DB
	benchCtx   context.Context
	benchAgent string
	benchCalls int
	benchBuild time.Duration
	benchDir   string
	benchEnd   = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
)

func benchSetup(b *testing.B) {
	benchOnce.Do(func() {
		benchCalls = 1_000_000
		if s := os.Getenv("VOICEAPI_BENCH_CALLS"); s != "" {
			benchCalls, _ = strconv.Atoi(s)
		}
		dir, err := os.MkdirTemp("", "voiceapi-bench")
		if err != nil {
			panic(err)
		}
		benchDir = dir
		now := benchEnd
		db, err := Open(dir, Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32), Now: func() time.Time { return now }})
		if err != nil {
			panic(err)
		}
		u, err := servicesFor(b, db).Users.CreateUser(context.Background(), data.UserCreate{Name: "B", Email: "bench@example.com", Password: "password123"})
		if err != nil {
			panic(err)
		}
		ws := u.PersonalWorkspaceID
		benchCtx = data.WithPrincipal(context.Background(), &data.Principal{UserID: u.ID, WorkspaceID: ws, CurrentWorkspaceID: ws, Role: data.RoleOwner, Modules: data.Modules})
		agents := make([]string, 20)
		numbers := make([]string, 10)
		for i := range agents {
			agents[i] = db.ids.New(data.PrefixAgent)
		}
		for i := range numbers {
			numbers[i] = db.ids.New(data.PrefixNumber)
		}
		benchAgent = agents[7]
		start := time.Now()
		if err := bulkInsertCalls(db, ws, agents, numbers, benchCalls, benchEnd.Add(-30*24*time.Hour), benchEnd); err != nil {
			panic(err)
		}
		benchBuild = time.Since(start)
		benchDB = db
	})
	if benchDB == nil {
		b.Fatal("bench setup failed")
	}
}

// bulkInsertCalls stores n calls created evenly over [from, to), 20,000 to a transaction.
func bulkInsertCalls(db *DB, ws string, agents, numbers []string, n int, from, to time.Time) error {
	step := to.Sub(from) / time.Duration(n)
	at := from
	ids := &data.IDGen{Now: func() time.Time { return at }, Rand: rand.NewChaCha8([32]byte{1})}
	rng := rand.New(rand.NewPCG(3, 4))
	reasons := []string{"user_hangup", "agent_hangup", "voicemail", "transfer", "inactivity"}
	err := db.bolt.Update(func(tx *bbolt.Tx) error {
		for _, a := range agents {
			if err := insertTestAgent(tx, ws, a, ptr(1)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	const batch = 2_000
	for done := 0; done < n; done += batch {
		err := db.bolt.Update(func(tx *bbolt.Tx) error {
			for i := done; i < min(done+batch, n); i++ {
				at = from.Add(time.Duration(i) * step)
				c := fakecalls.Finished(ws, ids.New(data.PrefixCall), at, agents[rng.IntN(len(agents))], numbers[rng.IntN(len(numbers))], rng, reasons)
				if err := insertCall(tx, c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func BenchmarkCallPageByAgent(b *testing.B) {
	benchSetup(b)
	f := data.CallFilter{AgentID: benchAgent}
	list, meta, err := svcOf(benchDB).Calls.ListCalls(benchCtx, f, data.PageRequest{PerPage: 50})
	if err != nil || len(list) != 50 || meta.NextCursor == nil {
		b.Fatalf("first page: %d calls, %v", len(list), err)
	}
	second := data.PageRequest{PerPage: 50, Cursor: *meta.NextCursor}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		req := data.PageRequest{PerPage: 50}
		if i%2 == 1 {
			req = second
		}
		if list, _, err := svcOf(benchDB).Calls.ListCalls(benchCtx, f, req); err != nil || len(list) != 50 {
			b.Fatalf("%d calls, %v", len(list), err)
		}
	}
}

// BenchmarkCallPage100 reads the newest page of 100 calls and the page after it: compare
// VOICEAPI_BENCH_CALLS=1000 with 1000000 (docs/performance.md).
func BenchmarkCallPage100(b *testing.B) {
	benchSetup(b)
	first, meta, err := svcOf(benchDB).Calls.ListCalls(benchCtx, data.CallFilter{}, data.PageRequest{PerPage: 100})
	if err != nil || len(first) != 100 || meta.NextCursor == nil {
		b.Fatalf("first page: %d calls, %v", len(first), err)
	}
	second := data.PageRequest{PerPage: 100, Cursor: *meta.NextCursor}
	for i := 0; b.Loop(); i++ {
		req := data.PageRequest{PerPage: 100}
		if i%2 == 1 {
			req = second
		}
		if list, _, err := svcOf(benchDB).Calls.ListCalls(benchCtx, data.CallFilter{}, req); err != nil || len(list) != 100 {
			b.Fatalf("%d calls, %v", len(list), err)
		}
	}
}

func BenchmarkCallPageByStatusAndDirection(b *testing.B) {
	benchSetup(b)
	f := data.CallFilter{Status: data.CallFailed, Direction: data.DirectionInbound}
	for b.Loop() {
		if list, _, err := svcOf(benchDB).Calls.ListCalls(benchCtx, f, data.PageRequest{PerPage: 50}); err != nil || len(list) != 50 {
			b.Fatalf("%d calls, %v", len(list), err)
		}
	}
}

func BenchmarkCallAnalytics30Days(b *testing.B) {
	benchSetup(b)
	for _, tc := range []struct {
		name     string
		interval string
		agent    string
	}{{"day", data.IntervalDay, ""}, {"hour", data.IntervalHour, ""}, {"day_agent", data.IntervalDay, benchAgent}} {
		b.Run(tc.name, func(b *testing.B) {
			// An unaligned range, as the default "last 30 days" is: both edge hours are
			// counted from their calls.
			to := benchEnd.Add(-17*time.Minute - 3*time.Second)
			q := data.CallAnalyticsQuery{From: to.Add(-30 * 24 * time.Hour), To: to, Interval: tc.interval, AgentID: tc.agent}
			var got *data.CallAnalytics
			for b.Loop() {
				var err error
				if got, err = svcOf(benchDB).Analytics.CallAnalytics(benchCtx, q); err != nil {
					b.Fatal(err)
				}
			}
			if tc.agent == "" && got.Totals.Calls < int64(benchCalls)*99/100 {
				b.Fatalf("counted %d of %d calls", got.Totals.Calls, benchCalls)
			}
		})
	}
}

func BenchmarkCallStorage(b *testing.B) {
	benchSetup(b)
	st, err := os.Stat(filepath.Join(benchDir, FileName))
	if err != nil {
		b.Fatal(err)
	}
	var used int64
	benchDB.bolt.View(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketCalls, bucketCallEntries, bucketCallScopes, bucketCallRollups, bucketCallScopeCounts} {
			bs := tx.Bucket(name).Stats()
			used += int64(bs.BranchInuse + bs.LeafInuse)
		}
		return nil
	})
	for b.Loop() {
	}
	b.ReportMetric(float64(st.Size())/float64(benchCalls), "file-bytes/call")
	b.ReportMetric(float64(used)/float64(benchCalls), "used-bytes/call")
	b.ReportMetric(float64(benchCalls), "calls")
	b.ReportMetric(benchBuild.Seconds(), "build-s")
	fmt.Fprintf(os.Stderr, "bench db: %d calls, file %d bytes, built in %s\n", benchCalls, st.Size(), benchBuild)
}

// TestMain removes the benchmarks' shared database when the package's tests end.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchDB != nil {
		benchDB.Close()
	}
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}
