package bolt_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// BenchmarkConversationRead: a turn's read of a conversation of 40 items, tool calls with
// numbers in their arguments and results (docs/performance.md, "Exact numbers").
func BenchmarkConversationRead(b *testing.B) { storetest.BenchConversationRead(b, testkit.OpenStore) }

// BenchmarkOpenConversations: the count of a start at the bound on open conversations
// (docs/performance.md, "The bound on open conversations").
func BenchmarkOpenConversations(b *testing.B) { storetest.BenchOpenConversations(b, testkit.OpenStore) }

// BenchmarkConversationList: the first page of GET /api/v1/conversations at 1,000 and
// 20,000 conversations (docs/performance.md, "The conversation list").
func BenchmarkConversationList(b *testing.B) {
	storetest.BenchConversationList(b, testkit.OpenStore, 1000, 20000)
}

// BenchmarkCampaignList: the first page of GET /api/v1/campaigns at 1,000 and 20,000
// campaigns (docs/performance.md, "The conversation list").
func BenchmarkCampaignList(b *testing.B) {
	storetest.BenchCampaignList(b, testkit.OpenStore, 1000, 20000)
}

// BenchmarkAgentsRead: 2,000 agents read one by one and a hundred at a time, as a call
// export's analysis columns read them (docs/performance.md, walk8).
func BenchmarkAgentsRead(b *testing.B) { storetest.BenchAgentsRead(b, testkit.OpenStore, 2000) }
