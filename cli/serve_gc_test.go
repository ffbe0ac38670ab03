package cli

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestTuneGC: serve's collector settings apply unless the environment names its own.
func TestTuneGC(t *testing.T) {
	oldPercent, oldLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(oldPercent); debug.SetMemoryLimit(oldLimit) })

	tuneGC(func(string) string { return "" })
	if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64); p != serveGCPercent || l != serveMemoryLimit {
		t.Errorf("without GOGC and GOMEMLIMIT: GC percent %d, limit %d; want %d, %d", p, l, serveGCPercent, serveMemoryLimit)
	}
	env := map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}
	tuneGC(func(k string) string { return env[k] })
	if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64); p != 100 || l != math.MaxInt64 {
		t.Errorf("with GOGC and GOMEMLIMIT set: GC percent %d, limit %d; want them untouched", p, l)
	}
}
