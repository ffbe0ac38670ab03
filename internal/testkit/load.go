package testkit

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// LoadResult is what a load run measured: its operations, how long they took together,
// and the median and 99th percentile of one operation.
type LoadResult struct {
	Ops      int
	Elapsed  time.Duration
	P50, P99 time.Duration
}

// PerSecond is the run's throughput.
func (r LoadResult) PerSecond() float64 { return float64(r.Ops) / r.Elapsed.Seconds() }

// Report adds the run's figures to a benchmark's output: ops/s, p50-ms and p99-ms.
func (r LoadResult) Report(b *testing.B) {
	b.ReportMetric(r.PerSecond(), "ops/s")
	b.ReportMetric(float64(r.P50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(r.P99.Microseconds())/1000, "p99-ms")
}

// RunLoad runs n operations from clients goroutines at once, each timed; op gets its
// client's number and the operation's. before, when not nil, runs untimed ahead of each
// operation in the same client (ending the call the client's last operation started, so
// the open calls stay as many as the clients). The first error stops the run and is
// returned.
func RunLoad(clients, n int, op, before func(client, i int) error) (LoadResult, error) {
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for failed.Load() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if before != nil {
					if err := before(c, i); err != nil {
						failed.CompareAndSwap(nil, &err)
						return
					}
				}
				t0 := time.Now()
				if err := op(c, i); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	res := LoadResult{Ops: n, Elapsed: time.Since(start)}
	if p := failed.Load(); p != nil {
		return res, *p
	}
	slices.Sort(lat)
	res.P50, res.P99 = lat[n/2], lat[min(n-1, n*99/100)]
	return res, nil
}
