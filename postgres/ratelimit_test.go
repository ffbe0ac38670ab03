package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// Counted one at a time, a window admits exactly limit requests, numbered 1..limit, and
// refuses the rest without counting them.
func TestCountRequestOneAtATime(t *testing.T) {
	db := testkit.OpenPostgres(t, nil)
	ctx := context.Background()
	start := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	var got []string
	for range 5 {
		n, added, err := db.CountRequest(ctx, "t1", start, 3)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(n, added))
	}
	want := []string{"1 true", "2 true", "3 true", "3 false", "3 false"}
	if !slices.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	// The next window starts again; another key has its own count.
	if n, added, _ := db.CountRequest(ctx, "t1", start.Add(time.Minute), 3); n != 1 || !added {
		t.Errorf("next window: %d %v, want 1 true", n, added)
	}
	if n, added, _ := db.CountRequest(ctx, "t2", start, 3); n != 1 || !added {
		t.Errorf("another key: %d %v, want 1 true", n, added)
	}
}

// A request taken back frees its place in its window only: the next request is added
// again, another window keeps its count, and a window never goes below zero.
func TestUncountRequest(t *testing.T) {
	db := testkit.OpenPostgres(t, nil)
	ctx := context.Background()
	start := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	for range 2 {
		if _, _, err := db.CountRequest(ctx, "a1", start, 2); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := db.CountRequest(ctx, "a1", start.Add(time.Minute), 1); err != nil {
		t.Fatal(err)
	}
	if err := db.UncountRequest(ctx, "a1", start); err != nil {
		t.Fatal(err)
	}
	if n, added, _ := db.CountRequest(ctx, "a1", start, 2); n != 2 || !added {
		t.Errorf("after one taken back: %d %v, want 2 true", n, added)
	}
	if n, added, _ := db.CountRequest(ctx, "a1", start.Add(time.Minute), 1); n != 1 || added {
		t.Errorf("the other window: %d %v, want 1 false", n, added)
	}
	for range 3 {
		if err := db.UncountRequest(ctx, "a1", start); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.UncountRequest(ctx, "nobody", start); err != nil {
		t.Errorf("taking back from a window never counted: %v", err)
	}
	if n, added, _ := db.CountRequest(ctx, "a1", start, 2); n != 1 || !added {
		t.Errorf("taken back past zero: %d %v, want 1 true", n, added)
	}
}

// Requests counted at once, in shared statements, get what one-at-a-time counting would
// give them: per window exactly limit admitted, numbered 1..limit once each, the rest
// refused with the limit as count.
func TestCountRequestConcurrently(t *testing.T) {
	db := testkit.OpenPostgres(t, nil)
	ctx := context.Background()
	start := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	const limit, perKey = 50, 120
	keys := []string{"ta", "tb", "tc"}
	type answer struct {
		n     int
		added bool
	}
	answers := make(map[string][]answer)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, key := range keys {
		for range perKey {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, added, err := db.CountRequest(ctx, key, start, limit)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				answers[key] = append(answers[key], answer{n, added})
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	for _, key := range keys {
		var admitted []int
		refused := 0
		for _, a := range answers[key] {
			switch {
			case a.added:
				admitted = append(admitted, a.n)
			case a.n == limit:
				refused++
			default:
				t.Errorf("%s: refused with count %d, want %d", key, a.n, limit)
			}
		}
		slices.Sort(admitted)
		want := make([]int, limit)
		for i := range want {
			want[i] = i + 1
		}
		if !slices.Equal(admitted, want) || refused != perKey-limit {
			t.Errorf("%s: admitted %v (%d), refused %d; want 1..%d and %d refused", key, admitted, len(admitted), refused, limit, perKey-limit)
		}
		var stored int
		if err := db.Pool().QueryRow(ctx, `SELECT count FROM rate_windows WHERE key = $1 AND window_start = $2`, key, start).Scan(&stored); err != nil || stored != limit {
			t.Errorf("%s: the row holds %d (%v), want %d: refused requests are not counted", key, stored, err, limit)
		}
	}
}

// BenchmarkCountRequest is what the shared rate limit costs a request on PostgreSQL: one
// request counted alone (a quiet replica: each request its own statement) and requests
// counted by 8 goroutines at once (a busy one: batched). The fence's lock and read
// with the count show here (docs/performance.md, fence3).
//
//	go test -run '^$' -bench BenchmarkCountRequest -benchtime 3000x -count 3 ./postgres
func BenchmarkCountRequest(b *testing.B) {
	db := testkit.OpenPostgres(b, nil)
	ctx := context.Background()
	start := time.Now().Truncate(time.Minute)
	b.Run("alone", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := db.CountRequest(ctx, "tbench", start, 1<<30); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("concurrent", func(b *testing.B) {
		b.SetParallelism(4) // 8 goroutines on 2 cores
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, _, err := db.CountRequest(ctx, "tbench", start, 1<<30); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
