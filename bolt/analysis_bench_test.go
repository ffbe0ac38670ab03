package bolt

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/fakecalls"
)

// The analysis figures' benchmark: one agent with VOICEAPI_BENCH_CALLS analyzed calls
// (default 1,000,000) over the 30 days before benchEnd, three versions in turn, each
// call stored through insertCall and its analysis values through setAnalysisValues (the
// paths every call and analysis take), in large transactions with fsync off.
var (
	figuresOnce  sync.Once
	figuresDB    *DB
	figuresCtx   context.Context
	figuresAgent string
)

func figuresSetup(b *testing.B) {
	figuresOnce.Do(func() {
		n := 1_000_000
		if s := os.Getenv("VOICEAPI_BENCH_CALLS"); s != "" {
			n, _ = strconv.Atoi(s)
		}
		dir, err := os.MkdirTemp("", "voiceapi-figures")
		if err != nil {
			panic(err)
		}
		db, err := Open(dir, Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32), Now: func() time.Time { return benchEnd }})
		if err != nil {
			panic(err)
		}
		svc := servicesFor(b, db)
		u, err := svc.Users.CreateUser(context.Background(), data.UserCreate{Name: "B", Email: "bench@example.com", Password: "password123"})
		if err != nil {
			panic(err)
		}
		ws := u.PersonalWorkspaceID
		ctx := data.WithPrincipal(context.Background(), &data.Principal{UserID: u.ID, WorkspaceID: ws, CurrentWorkspaceID: ws, Role: data.RoleOwner, Modules: data.Modules})
		cfg := fakecalls.AnalysisConfig()
		a, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Analyzed"),
			AnalysisConfig: data.Some(data.AnalysisConfigPatch{Fields: data.Some(cfg.Fields), SuccessCriterion: data.Some(cfg.SuccessCriterion)})})
		if err != nil {
			panic(err)
		}
		start := time.Now()
		from := benchEnd.Add(-30 * 24 * time.Hour)
		step := benchEnd.Sub(from) / time.Duration(n)
		at := from
		ids := &data.IDGen{Now: func() time.Time { return at }, Rand: rand.NewChaCha8([32]byte{2})}
		rng := rand.New(rand.NewPCG(5, 6))
		number := ids.New(data.PrefixNumber)
		const batch = 5_000
		for done := 0; done < n; done += batch {
			err := db.bolt.Update(func(tx *bbolt.Tx) error {
				for i := done; i < min(done+batch, n); i++ {
					at = from.Add(time.Duration(i) * step)
					c := fakecalls.Finished(ws, ids.New(data.PrefixCall), at, a.ID, number, rng, []string{"user_hangup"})
					version := 1 + i*3/n
					c.AgentVersion, c.Analysis = &version, fakecalls.Analysis(rng)
					if err := insertCall(tx, c); err != nil {
						return err
					}
					if err := setAnalysisValues(tx, c, data.ValuesOf(c, &cfg)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				panic(err)
			}
		}
		b.Logf("loaded %d analyzed calls in %v", n, time.Since(start).Round(time.Second))
		figuresDB, figuresCtx, figuresAgent = db, ctx, a.ID
	})
	if figuresDB == nil {
		b.Fatal("bench setup failed")
	}
}

// BenchmarkAnalysisFigures answers GET /api/v1/analytics/analysis over the whole 30 days
// (by day, edges cut mid-hour) for an enum and a number field, through the service:
// p50 and p99 a request (docs/performance.md; goal under 1 s at 1,000,000 calls).
func BenchmarkAnalysisFigures(b *testing.B) {
	figuresSetup(b)
	svc := servicesFor(b, figuresDB)
	for _, field := range []string{"outcome", "score"} {
		b.Run(field, func(b *testing.B) {
			q := data.AnalysisQuery{AgentID: figuresAgent, Field: field, Interval: data.IntervalDay,
				From: benchEnd.Add(-30*24*time.Hour - 30*time.Minute), To: benchEnd.Add(-30 * time.Minute)}
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				f, err := svc.Analytics.AnalysisFigures(figuresCtx, q)
				took = append(took, time.Since(start))
				if err != nil || f.Count == 0 || f.Success.Judged == 0 {
					b.Fatalf("figures %+v, %v", f, err)
				}
			}
			reportPercentiles(b, took)
		})
	}
}

// reportPercentiles reports the p50 and p99 of the iterations' times, in milliseconds.
func reportPercentiles(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	at := func(q float64) float64 {
		return float64(took[min(len(took)-1, int(q*float64(len(took))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}
