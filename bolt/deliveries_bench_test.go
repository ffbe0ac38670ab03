package bolt_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service/storetest"
)

// BenchmarkDeliveriesFiltered: a narrowed webhook's first page for a key that reads only
// its present type, past 10,000 older deliveries it may not read (docs/performance.md,
// "A narrowed webhook's delivery log").
func BenchmarkDeliveriesFiltered(b *testing.B) {
	storetest.BenchDeliveriesFiltered(b, testkit.OpenStore)
}
