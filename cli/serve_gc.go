package cli

import (
	"runtime/debug"
)

// serveGCPercent and serveMemoryLimit are the collector's settings of `voiceapi serve`
// when the environment sets none (GOGC, GOMEMLIMIT). The server's live heap is small
// (5-10 MB: caches and requests in flight), so Go's default GOGC=100 collected every
// 7 MB allocated: 15-20 collections a second while pages of 100 calls were served, and
// their pauses and mark assists were the slowest requests (docs/performance.md, "Tail
// latency"). At 400 the heap may grow to five times the live heap (about 30-50 MB)
// between collections, a quarter as many; the soft limit makes the collector work
// harder instead of letting a large live heap (an import, a big export) grow it further.
const (
	serveGCPercent   = 400
	serveMemoryLimit = 192 << 20
)

// tuneGC applies serveGCPercent and serveMemoryLimit, each unless getenv names its own
// variable (an operator's GOGC or GOMEMLIMIT wins; the runtime has read them already).
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serveMemoryLimit)
	}
}
