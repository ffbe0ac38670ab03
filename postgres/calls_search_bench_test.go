package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/fulltext"
	"github.com/voiceapi/voiceapi/internal/fakecalls"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// The search benchmarks have a database of their own: VOICEAPI_BENCH_CALLS calls
// (default 100,000; the figure is 1,000,000) like BenchmarkCallPages's, each with
// a varied transcript and its postings, loaded with COPY once per process.
var (
	searchBenchOnce sync.Once
	searchBenchDB   *postgres.DB
	searchBenchGen  *benchGen
)

func searchBenchSetup(b *testing.B) {
	searchBenchOnce.Do(func() {
		n := 100_000
		if s := os.Getenv("VOICEAPI_BENCH_CALLS"); s != "" {
			n, _ = strconv.Atoi(s)
		}
		db := testkit.OpenPostgres(b, nil)
		ctx := context.Background()
		start := time.Now()
		g := newBenchGen(n)
		postings := 0
		for done := 0; done < n; done += 20_000 {
			calls := g.next(min(20_000, n-done))
			terms := map[string]map[string]int{}
			for i, c := range calls {
				c.Transcript = fakecalls.Transcript(int64(done + i))
				terms[c.ID] = fulltext.CallTerms(c)
				postings += len(terms[c.ID])
			}
			if err := postgres.CopyCalls(ctx, db, calls); err != nil {
				b.Fatal(err)
			}
			if err := postgres.CopyCallTerms(ctx, db, benchWS, terms); err != nil {
				b.Fatal(err)
			}
		}
		if err := postgres.DeriveCallTables(ctx, db); err != nil {
			b.Fatal(err)
		}
		if err := postgres.DeriveCallTermCounts(ctx, db); err != nil {
			b.Fatal(err)
		}
		b.Logf("loaded %d calls and %d postings in %v", n, postings, time.Since(start).Round(time.Millisecond))
		searchBenchDB, searchBenchGen = db, g
	})
	if searchBenchDB == nil {
		b.Fatal("bench setup failed")
	}
}

// reportLatency reports the median and the 99th percentile of lat.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(at(0.5), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkCallSearch reads the first page of 20 hits of a one-word and a three-word
// query, newest first and by relevance, unfiltered and by agent, each request in its
// own read transaction (the storage part of GET /calls?q=, without HTTP and snippets).
func BenchmarkCallSearch(b *testing.B) {
	searchBenchSetup(b)
	agent := searchBenchGen.agents[7]
	if os.Getenv("VOICEAPI_BENCH_EXPLAIN") != "" {
		logSearchPlans(b)
	}
	benchSearchPages(b, agent)
	benchThreeTermANDs(b)
	benchCallInserts(b, agent)
}

// logSearchPlans logs PostgreSQL's plan of a one-word and a three-word search.
func logSearchPlans(b *testing.B) {
	for _, q := range []string{"cancel", "cancel my subscription"} {
		plan, err := postgres.ExplainSearch(context.Background(), searchBenchDB, benchWS, data.CallFilter{},
			data.CallSearch{Q: q, Terms: fulltext.QueryTerms(q), Sort: data.SortCreatedAt})
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s:\n%s", q, plan)
	}
}

// benchSearchPages times the first page of 20 hits of each search.
func benchSearchPages(b *testing.B, agent string) {
	for _, tc := range []struct {
		name, q, sort string
		f             data.CallFilter
	}{
		{"one_word", "cancel", data.SortCreatedAt, data.CallFilter{}},
		{"three_words", "cancel my subscription", data.SortCreatedAt, data.CallFilter{}},
		{"one_word_relevance", "cancel", data.SortRelevance, data.CallFilter{}},
		{"three_words_relevance", "cancel my subscription", data.SortRelevance, data.CallFilter{}},
		{"three_words_agent", "cancel my subscription", data.SortCreatedAt, data.CallFilter{AgentID: agent}},
		{"rare_word", "subscription", data.SortCreatedAt, data.CallFilter{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := data.CallSearch{Q: tc.q, Terms: fulltext.QueryTerms(tc.q), Sort: tc.sort}
			var lat []time.Duration
			var page data.Page
			for b.Loop() {
				start := time.Now()
				err := searchBenchDB.View(context.Background(), func(tx service.Tx) error {
					hits, p, err := tx.SearchCalls(benchWS, nil, tc.f, s, data.PageRequest{PerPage: 20, Cursor: ""})
					if err == nil && len(hits) != 20 {
						return fmt.Errorf("%d hits", len(hits))
					}
					page = p
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			if page.NextCursor == nil {
				b.Fatal("no next page")
			}
			reportLatency(b, lat)
		})
	}
}

// benchThreeTermANDs times the AND of three terms as the index walk does it (the rarest
// term's postings, the others checked by EXISTS) and as an INTERSECT of the three
// posting lists: the first 21 ids, newest first.
func benchThreeTermANDs(b *testing.B) {
	terms := fulltext.QueryTerms("cancel my subscription")
	for name, sql := range map[string]string{
		"and_exists": `SELECT p.call_id FROM call_terms p WHERE p.workspace_id = $1 AND p.term = $4
			AND EXISTS (SELECT 1 FROM call_terms t WHERE t.workspace_id = $1 AND t.term = $2 AND t.call_id = p.call_id)
			AND EXISTS (SELECT 1 FROM call_terms t WHERE t.workspace_id = $1 AND t.term = $3 AND t.call_id = p.call_id)
			ORDER BY p.call_id DESC LIMIT 21`,
		"and_intersect": `SELECT call_id FROM call_terms WHERE workspace_id = $1 AND term = $2
			INTERSECT SELECT call_id FROM call_terms WHERE workspace_id = $1 AND term = $3
			INTERSECT SELECT call_id FROM call_terms WHERE workspace_id = $1 AND term = $4
			ORDER BY call_id DESC LIMIT 21`,
	} {
		b.Run(name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				n, err := postgres.CountRows(context.Background(), searchBenchDB, sql, benchWS, terms[0], terms[1], terms[2])
				if err != nil || n != 21 {
					b.Fatal(n, err)
				}
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}
}

// benchCallInserts times one call's write alone and with its postings (about 45); it
// runs last, as it adds calls.
func benchCallInserts(b *testing.B, agent string) {
	for _, withTerms := range []bool{false, true} {
		name := "insert_call"
		if withTerms {
			name = "insert_call+postings"
		}
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(5, 6))
			ids := data.NewIDGen()
			i := int64(1 << 40)
			for b.Loop() {
				c := fakecalls.Finished(benchWS, ids.New(data.PrefixCall), time.Now(), agent, "num_01JD6BENCH00000000000000000", rng, []string{"user_hangup"})
				c.Transcript = fakecalls.Transcript(i)
				i++
				err := searchBenchDB.Update(context.Background(), func(tx service.Tx) error {
					if err := tx.InsertCall(c); err != nil || !withTerms {
						return err
					}
					return tx.SetCallTerms(c.WorkspaceID, c.ID, nil, fulltext.CallTerms(c))
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
