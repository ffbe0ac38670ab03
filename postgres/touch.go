package postgres

import (
	"context"
	"sync"
	"time"
)

// toucher records API keys' last_used_at in memory and writes them in one statement every
// few seconds: a write per authenticated request would make every read a write, and
// last_used_at is informational. Replicas flush independently; the newest use wins.
type toucher struct {
	db      *DB
	mu      sync.Mutex
	pending map[int64]time.Time
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

// touchInterval is how often pending uses are written.
const touchInterval = 5 * time.Second

func newToucher(db *DB) *toucher {
	t := &toucher{db: db, pending: map[int64]time.Time{}, done: make(chan struct{}), stopped: make(chan struct{})}
	go t.loop()
	return t
}

// MarkAPIKeyUsed implements service.KeyUseRecorder: the toucher writes last_used_at in
// batches.
func (db *DB) MarkAPIKeyUsed(id int64, at time.Time) { db.touch.mark(id, at) }

func (t *toucher) mark(id int64, at time.Time) {
	t.mu.Lock()
	if prev, ok := t.pending[id]; !ok || at.After(prev) {
		t.pending[id] = at
	}
	t.mu.Unlock()
}

func (t *toucher) loop() {
	defer close(t.stopped)
	tick := time.NewTicker(touchInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			t.flush()
		case <-t.done:
			t.flush()
			return
		}
	}
}

// stop writes what is pending and ends the loop.
func (t *toucher) stop() {
	t.once.Do(func() { close(t.done) })
	<-t.stopped
}

// flush writes the pending uses in one statement, outside any transaction of the
// service's: it touches only last_used_at, never earlier than what is stored (another
// replica may have written a later use), and skips keys revoked meanwhile.
func (t *toucher) flush() {
	t.mu.Lock()
	batch := t.pending
	t.pending = map[int64]time.Time{}
	t.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	ids := make([]int64, 0, len(batch))
	ats := make([]time.Time, 0, len(batch))
	for id, at := range batch {
		ids, ats = append(ids, id), append(ats, at.UTC().Truncate(time.Millisecond))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := t.db.pool.Exec(ctx, `UPDATE api_keys k SET last_used_at = u.at
		FROM unnest($1::bigint[], $2::timestamptz[]) AS u(id, at)
		WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`, ids, ats)
	if err != nil {
		t.db.log.Error("recording last_used_at", "error", err)
	}
}
