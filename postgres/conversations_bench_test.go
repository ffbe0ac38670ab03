package postgres_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// BenchmarkConversationRead: a turn's read of a conversation of 40 items, tool calls with
// numbers in their arguments and results (docs/performance.md, "Exact numbers").
func BenchmarkConversationRead(b *testing.B) {
	storetest.BenchConversationRead(b, testkit.OpenPostgresStore)
}
