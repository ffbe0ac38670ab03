package strictjson_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
)

// unknownMembers is an object of n members no struct knows, as a hostile body sends.
func unknownMembers(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"name":"x"`)
	for i := range n {
		fmt.Fprintf(&b, `,"unknown_member_%07d":1`, i)
	}
	b.WriteString("}")
	return []byte(b.String())
}

type named struct {
	Name string `json:"name"`
}

// TestUnknownMembersCostNoMessageEach: past data.MaxFaults, an unknown member is counted
// without its path or message being built: it costs the decoder's one allocation (the
// duplicate check's), where a kept fault costs five, and the total stays right.
func TestUnknownMembersCostNoMessageEach(t *testing.T) {
	measure := func(n int) (float64, error) {
		body := unknownMembers(n)
		var err error
		allocs := testing.AllocsPerRun(2, func() { var v named; err = strictjson.Decode(body, &v) })
		return allocs, err
	}
	atBound, _ := measure(data.MaxFaults)
	past, err := measure(10 * data.MaxFaults)
	e, _ := err.(*data.Error)
	if e == nil || len(e.Fields) != data.MaxFaults || !strings.HasSuffix(e.Message, fmt.Sprintf("(and %s more errors)", data.Thousands(10*data.MaxFaults-1))) {
		t.Fatalf("10× the bound: %v", err)
	}
	if perMember := (past - atBound) / (9 * data.MaxFaults); perMember > 1.5 {
		t.Errorf("%.1f allocations for each unknown member past the bound (%.0f for %d, %.0f for %d): each costs its message",
			perMember, past, 10*data.MaxFaults, atBound, data.MaxFaults)
	}
}

// BenchmarkDecodeUnknownMembers: 100,000 unknown members, as a 3 MB body of them
// (docs/performance.md, "Hostile bodies").
func BenchmarkDecodeUnknownMembers(b *testing.B) {
	body := unknownMembers(100_000)
	b.ReportAllocs()
	for b.Loop() {
		var v named
		_ = strictjson.Decode(body, &v)
	}
}
