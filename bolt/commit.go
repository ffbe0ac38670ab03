package bolt

import (
	"errors"
	"fmt"
	"sync"

	"go.etcd.io/bbolt"
)

// committer is voiceapi's group commit. Writers hand their transaction functions to one
// goroutine, which runs every function waiting at that moment in one write transaction:
// one commit, one fsync, for all of them. It never waits for company: when no commit is
// in flight a lone write commits at once, and whatever arrives during a commit's fsync
// goes into the next one. bbolt's Batch, used before, held every batch for
// MaxBatchDelay (2 ms, a quarter of a lone write's time here) on a timer.
//
// A function that fails is taken out and its transaction is run again without it, as
// Batch does; the failing function then runs alone, so its error is its own. Functions
// may thus run more than once, and must only touch the transaction.
type committer struct {
	db    *bbolt.DB
	mu    sync.Mutex
	queue []*commitCall
	wake  chan struct{} // one token: the queue is not empty
	done  chan struct{}
	ended chan struct{} // the loop has returned
	once  sync.Once
	// maxBatch bounds a transaction's functions, so that one commit stays short.
	maxBatch int
}

type commitCall struct {
	fn  func(*bbolt.Tx) error
	err chan error
	// own is set, before err is sent, when the error is fn's own rather than the
	// commit's: noSpace, which reads bbolt's errors by their text, passes it over.
	own bool
}

// errRunAlone tells a submitter that its function failed in a group: run it alone.
var errRunAlone = errors.New("bolt: run alone")

func newCommitter(db *bbolt.DB) *committer {
	c := &committer{db: db, wake: make(chan struct{}, 1), done: make(chan struct{}), ended: make(chan struct{}), maxBatch: 1000}
	go c.loop()
	return c
}

// update runs fn in a shared write transaction and returns once it is committed.
func (c *committer) update(fn func(*bbolt.Tx) error) error {
	call := &commitCall{fn: fn, err: make(chan error, 1)}
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		return bbolt.ErrDatabaseNotOpen
	default:
	}
	c.queue = append(c.queue, call)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default: // a token is already there
	}
	err := <-call.err
	if err == errRunAlone {
		var own error
		err = c.db.Update(func(tx *bbolt.Tx) error {
			own = safely(fn, tx)
			return own
		})
		call.own = err != nil && err == own
	}
	if call.own {
		return err // fn's own refusal: its words may be anything, its kind is its own
	}
	return noSpace(err)
}

func (c *committer) loop() {
	defer close(c.ended)
	for {
		select {
		case <-c.done:
			c.drain(bbolt.ErrDatabaseNotOpen)
			return
		case <-c.wake:
		}
		for {
			c.mu.Lock()
			n := min(len(c.queue), c.maxBatch)
			calls := c.queue[:n:n]
			c.queue = c.queue[n:]
			c.mu.Unlock()
			if n == 0 {
				break
			}
			c.commit(calls)
		}
	}
}

// commit runs calls in one transaction; a failing one is sent to run alone and the rest
// are run again without it.
func (c *committer) commit(calls []*commitCall) {
	for len(calls) > 0 {
		failed := -1
		err := c.db.Update(func(tx *bbolt.Tx) error {
			for i, call := range calls {
				if err := safely(call.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed >= 0 {
			if len(calls) == 1 {
				calls[0].own = true
				calls[0].err <- err // alone already: the error is its own
				return
			}
			calls[failed].err <- errRunAlone
			calls = append(calls[:failed:failed], calls[failed+1:]...)
			continue
		}
		for _, call := range calls {
			call.err <- err
		}
		return
	}
}

// stop lets the commit in flight finish, fails the calls still queued and ends the
// loop; update refuses new calls after.
func (c *committer) stop() {
	c.once.Do(func() {
		c.mu.Lock()
		close(c.done)
		c.mu.Unlock()
	})
	<-c.ended
}

func (c *committer) drain(err error) {
	c.mu.Lock()
	calls := c.queue
	c.queue = nil
	c.mu.Unlock()
	for _, call := range calls {
		call.err <- err
	}
}

// safely runs fn, turning a panic into an error so that one bad function cannot take
// the other writers of its group down with it.
func safely(fn func(*bbolt.Tx) error, tx *bbolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in a write transaction: %v", p)
		}
	}()
	return fn(tx)
}
