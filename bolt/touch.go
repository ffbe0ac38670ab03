package bolt

import (
	"sync"
	"time"

	"go.etcd.io/bbolt"
)

// toucher records API keys' last_used_at in memory and writes them in one transaction
// every few seconds: a write (and fsync) per authenticated request would cap reads at the
// disk's pace, and last_used_at is informational.
type toucher struct {
	db      *DB
	mu      sync.Mutex
	pending map[int64]time.Time
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

const touchInterval = 5 * time.Second

func newToucher(db *DB) *toucher {
	t := &toucher{db: db, pending: map[int64]time.Time{}, done: make(chan struct{}), stopped: make(chan struct{})}
	go t.loop()
	return t
}

func (t *toucher) mark(id int64, at time.Time) {
	t.mu.Lock()
	t.pending[id] = at
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

func (t *toucher) stop() {
	t.once.Do(func() { close(t.done) })
	<-t.stopped
}

func (t *toucher) flush() {
	t.mu.Lock()
	batch := t.pending
	t.pending = map[int64]time.Time{}
	t.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	err := t.db.bolt.Update(func(tx *bbolt.Tx) error {
		for id, at := range batch {
			if err := touchAPIKey(tx, id, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.db.log.Error("recording last_used_at", "error", err)
	}
}
