package postgres_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// BenchmarkRecipientsByState: a state's first page of a 50,000-recipient campaign
// (docs/performance.md, "A campaign's recipients by state"). VOICEAPI_BENCH_ANALYZE=1
// runs ANALYZE once they are stored, as autovacuum does on a live database.
func BenchmarkRecipientsByState(b *testing.B) {
	storetest.BenchRecipientsByState(b, func(tb testing.TB) service.Store {
		return analyzedStore{testkit.OpenPostgres(tb, nil)}
	})
}
