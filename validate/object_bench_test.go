package validate_test

import (
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/validate"
)

// BenchmarkObjectAgentBody reads the full agent body of BenchmarkApplyAgentBody as the
// server does first (validate.Object: parse, one object, no member name given twice): the
// cost of refusing duplicated member names shows here, not in ApplyAgentBody.
func BenchmarkObjectAgentBody(b *testing.B) {
	raw, err := json.Marshal(fullAgentBody(20))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := validate.Object(raw); err != nil {
			b.Fatal(err)
		}
	}
}
