package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// snapshotQueue is a delivery queue over a store one process owns, whose claim reads a
// snapshot as bbolt's read transactions do. Its second claim takes the snapshot while the
// first attempt is being posted, lets that attempt be recorded, and only then asks skip
// about the ids in it: the interleaving that once posted a delivery twice.
type snapshotQueue struct {
	url string

	mu       sync.Mutex
	pending  map[string]bool
	claims   int
	snapshot chan struct{} // closed once the second claim holds its snapshot
	recorded chan struct{} // closed once the first attempt is recorded
	once     sync.Once
}

func (q *snapshotQueue) FanOut(context.Context, int) (int, error) { return 0, nil }

func (q *snapshotQueue) ClaimDueDeliveries(_ context.Context, _ time.Time, limit int, _ time.Duration, skip func(string) bool) ([]*data.DeliveryJob, time.Time, error) {
	q.mu.Lock()
	q.claims++
	n := q.claims
	var ids []string
	for id, p := range q.pending {
		if p {
			ids = append(ids, id)
		}
	}
	q.mu.Unlock()
	if n == 2 {
		close(q.snapshot)
		select {
		case <-q.recorded:
		case <-time.After(30 * time.Second): // a hang guard only
		}
		// The worker leaves the id in flight until just after recording: wait for that,
		// but no longer than a moment once it is recorded.
		for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if len(ids) > 0 && !skip(ids[0]) {
				break
			}
		}
	}
	var jobs []*data.DeliveryJob
	for _, id := range ids {
		if len(jobs) < limit && !skip(id) {
			jobs = append(jobs, &data.DeliveryJob{DeliveryID: id, WebhookID: "wh_1", EventID: "evt_" + id, Attempt: 1,
				URL: q.url, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Body: []byte(`{}`)})
		}
	}
	return jobs, time.Time{}, nil
}

func (q *snapshotQueue) FinishAttempt(_ context.Context, id string, _ data.AttemptOutcome) error {
	select {
	case <-q.snapshot:
	case <-time.After(30 * time.Second): // a hang guard only
	}
	q.mu.Lock()
	q.pending[id] = false
	q.mu.Unlock()
	q.once.Do(func() { close(q.recorded) })
	return nil
}

func TestClaimFromAStaleSnapshotDoesNotPostTwice(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
	}))
	defer srv.Close()
	q := &snapshotQueue{url: srv.URL, pending: map[string]bool{"dlv_1": true},
		snapshot: make(chan struct{}), recorded: make(chan struct{})}
	d := NewDispatcher(q, Config{AllowPrivate: true, Workers: 2, Timeout: 30 * time.Second})
	d.Start(context.Background())
	deadline := time.Now().Add(30 * time.Second)
	for {
		q.mu.Lock()
		claims := q.claims
		q.mu.Unlock()
		if claims >= 3 || time.Now().After(deadline) {
			break // the claim after the stale one has run: every post has been handed out
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := d.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := posts.Load(); n != 1 {
		t.Fatalf("the delivery was posted %d times; a claim from a snapshot taken before its attempt was recorded must skip it", n)
	}
}
