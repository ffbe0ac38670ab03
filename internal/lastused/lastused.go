// Package lastused batches the writes of API keys' last_used_at for the storage engines:
// a write (and fsync, or round trip) per authenticated request would make every read a
// write, and last_used_at is informational, so uses are kept in memory and written
// together every Interval by the engine's own flush.
package lastused

import (
	"log/slog"
	"sync"
	"time"
)

// Interval is how often pending uses are written.
const Interval = 5 * time.Second

// Batcher holds the uses marked since the last flush, at most one per key (the newest),
// and hands them to the engine's flush every Interval and once more on Stop.
type Batcher struct {
	write func(map[int64]time.Time) error
	log   *slog.Logger
	// flushing is held across a whole flush, so that a Flush returns only once every
	// use marked before it is written, even one the loop's flush took and is still
	// writing, and so that batches are written in the order they were taken.
	flushing sync.Mutex
	mu       sync.Mutex
	pending  map[int64]time.Time
	done     chan struct{}
	stopped  chan struct{}
	once     sync.Once
}

// Start returns a running Batcher that writes batches through write (key id → time of
// its newest use; never empty) and logs write's errors to log: a lost batch costs only
// informational timestamps, so it is not retried.
func Start(write func(map[int64]time.Time) error, log *slog.Logger) *Batcher {
	b := &Batcher{write: write, log: log, pending: map[int64]time.Time{}, done: make(chan struct{}), stopped: make(chan struct{})}
	go b.loop()
	return b
}

// Mark notes that key id was used at at; an earlier use than one already pending is
// dropped, as uses may be marked out of order by concurrent requests.
func (b *Batcher) Mark(id int64, at time.Time) {
	b.mu.Lock()
	if prev, ok := b.pending[id]; !ok || at.After(prev) {
		b.pending[id] = at
	}
	b.mu.Unlock()
}

func (b *Batcher) loop() {
	defer close(b.stopped)
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			b.Flush()
		case <-b.done:
			b.Flush()
			return
		}
	}
}

// Stop writes what is pending and ends the loop; later calls return at once.
func (b *Batcher) Stop() {
	b.once.Do(func() { close(b.done) })
	<-b.stopped
}

// Flush writes the pending uses now (tests call it instead of waiting for the tick).
func (b *Batcher) Flush() {
	b.flushing.Lock()
	defer b.flushing.Unlock()
	b.mu.Lock()
	batch := b.pending
	b.pending = map[int64]time.Time{}
	b.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	if err := b.write(batch); err != nil {
		b.log.Error("recording last_used_at", "error", err)
	}
}
