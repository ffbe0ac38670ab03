package bolt_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// BenchmarkRecipientsByState: a state's first page of a 50,000-recipient campaign
// (docs/performance.md, "A campaign's recipients by state").
func BenchmarkRecipientsByState(b *testing.B) {
	storetest.BenchRecipientsByState(b, testkit.OpenStore)
}
