package lastused

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a write func that keeps every batch it was given.
type recorder struct {
	mu      sync.Mutex
	batches []map[int64]time.Time
	err     error
}

func (r *recorder) write(b map[int64]time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, b)
	return r.err
}

func TestBatcherKeepsNewestUseAndFlushesOnStop(t *testing.T) {
	var r recorder
	b := Start(r.write, slog.Default())
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b.Mark(1, t0)
	b.Mark(1, t0.Add(-time.Hour)) // marked late: dropped
	b.Mark(2, t0)
	b.Mark(2, t0.Add(time.Minute))
	b.Flush()
	b.Flush() // nothing pending: write is not called
	b.Mark(3, t0)
	b.Stop()
	b.Stop() // a second Stop returns at once
	if len(r.batches) != 2 {
		t.Fatalf("%d batches, want 2: %v", len(r.batches), r.batches)
	}
	first := r.batches[0]
	if len(first) != 2 || !first[1].Equal(t0) || !first[2].Equal(t0.Add(time.Minute)) {
		t.Errorf("first batch %v", first)
	}
	if second := r.batches[1]; len(second) != 1 || !second[3].Equal(t0) {
		t.Errorf("batch written on Stop %v", second)
	}
}

func TestBatcherLogsWriteError(t *testing.T) {
	var buf bytes.Buffer
	r := recorder{err: errors.New("disk full")}
	b := Start(r.write, slog.New(slog.NewTextHandler(&buf, nil)))
	b.Mark(1, time.Now())
	b.Stop()
	if !strings.Contains(buf.String(), "recording last_used_at") || !strings.Contains(buf.String(), "disk full") {
		t.Errorf("log %q", buf.String())
	}
}

// TestFlushWaitsForAFlushUnderWay: a Flush called while another flush (the loop's, every
// Interval) has taken the pending uses and is still writing them returns only once they
// are written. Before, it found nothing pending and returned at once, so a caller that
// flushed and then read last_used_at could read it unwritten.
func TestFlushWaitsForAFlushUnderWay(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var written []int64
	var calls int
	write := func(batch map[int64]time.Time) error {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			close(entered)
			<-release // the first write is slow
		}
		mu.Lock()
		defer mu.Unlock()
		for id := range batch {
			written = append(written, id)
		}
		return nil
	}
	b := Start(write, slog.Default())
	defer b.Stop()
	b.Mark(1, time.Now())
	go b.Flush() // stands for the loop's flush
	<-entered
	// The slow write goes on until this Flush has had time to return; with the fix the
	// Flush cannot return before it, whatever the timing.
	timer := time.AfterFunc(100*time.Millisecond, func() { close(release) })
	defer timer.Stop()
	b.Flush()
	mu.Lock()
	defer mu.Unlock()
	if len(written) != 1 || written[0] != 1 {
		t.Fatalf("Flush returned while the use marked before it was still being written (written %v)", written)
	}
}
