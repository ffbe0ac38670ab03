package server

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestRateLimiterEvictsIdleKeys(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newRateLimiter(5, func() time.Time { return now })
	for i := 0; i < 1000; i++ {
		l.allow(context.Background(), fmt.Sprint("key", i))
	}
	if l.size() != 1000 {
		t.Fatalf("size %d, want 1000", l.size())
	}
	now = now.Add(rateWindow)
	d := l.allow(context.Background(), "fresh")
	if !d.allowed || d.remaining != 4 {
		t.Errorf("fresh key: %+v", d)
	}
	if l.size() != 1 {
		t.Errorf("after a window, %d keys are held, want only the fresh one", l.size())
	}
}

func TestRateLimiterOffAndCeil(t *testing.T) {
	if newRateLimiter(0, time.Now) != nil {
		t.Error("limit 0 should turn the limiter off")
	}
	for d, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, 1500 * time.Millisecond: 2, time.Minute: 60} {
		if got := ceilSeconds(d); got != want {
			t.Errorf("ceilSeconds(%v) = %d, want %d", d, got, want)
		}
	}
}
