package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// BenchmarkDeliveriesFiltered: a narrowed webhook's first page for a key that reads only
// its present type, past 10,000 older deliveries it may not read (docs/performance.md,
// "A narrowed webhook's delivery log"). VOICEAPI_BENCH_ANALYZE=1 runs ANALYZE once they
// are stored, as autovacuum does on a live database: the page's plan depends on it.
func BenchmarkDeliveriesFiltered(b *testing.B) {
	storetest.BenchDeliveriesFiltered(b, func(tb testing.TB) service.Store {
		return analyzedStore{testkit.OpenPostgres(tb, nil)}
	})
}

// analyzedStore is a store the benchmark settles with ANALYZE when asked to.
type analyzedStore struct{ *postgres.DB }

func (s analyzedStore) Settle(tb testing.TB) {
	if os.Getenv("VOICEAPI_BENCH_ANALYZE") != "1" {
		return
	}
	if _, err := s.Pool().Exec(context.Background(), "ANALYZE"); err != nil {
		tb.Fatal(err)
	}
}
