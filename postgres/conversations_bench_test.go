package postgres_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// BenchmarkConversationRead: a turn's read of a conversation of 40 items, tool calls with
// numbers in their arguments and results (docs/performance.md, "Exact numbers").
func BenchmarkConversationRead(b *testing.B) {
	storetest.BenchConversationRead(b, testkit.OpenPostgresStore)
}

// BenchmarkOpenConversations: the count of a start at the bound on open conversations
// (docs/performance.md, "The bound on open conversations").
func BenchmarkOpenConversations(b *testing.B) {
	storetest.BenchOpenConversations(b, testkit.OpenPostgresStore)
}

// BenchmarkConversationList: the first page of GET /api/v1/conversations at 1,000,
// 20,000 and 100,000 conversations (docs/performance.md, "The conversation list").
// VOICEAPI_BENCH_ANALYZE=1 runs ANALYZE once they are stored, as autovacuum does on a
// live database: the plans depend on it.
func BenchmarkConversationList(b *testing.B) {
	storetest.BenchConversationList(b, openAnalyzedStore, 1000, 20000, 100000)
}

// BenchmarkCampaignList: the first page of GET /api/v1/campaigns at 1,000 and 20,000
// campaigns (docs/performance.md, "The conversation list"); VOICEAPI_BENCH_ANALYZE as
// above.
func BenchmarkCampaignList(b *testing.B) {
	storetest.BenchCampaignList(b, openAnalyzedStore, 1000, 20000)
}

// openAnalyzedStore opens a PostgreSQL store that VOICEAPI_BENCH_ANALYZE=1 settles.
func openAnalyzedStore(tb testing.TB) service.Store {
	return analyzedStore{testkit.OpenPostgres(tb, nil)}
}

// BenchmarkAgentsRead: 2,000 agents read one by one and a hundred at a time, as a call
// export's analysis columns read them (docs/performance.md, walk8).
func BenchmarkAgentsRead(b *testing.B) {
	storetest.BenchAgentsRead(b, testkit.OpenPostgresStore, 2000)
}
