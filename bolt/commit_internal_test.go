package bolt

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"go.etcd.io/bbolt"
)

func openCommitter(t *testing.T) (*bbolt.DB, *committer) {
	t.Helper()
	bdb, err := bbolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, &bbolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c := newCommitter(bdb)
	t.Cleanup(func() { c.stop(); bdb.Close() })
	if err := c.update(func(tx *bbolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	return bdb, c
}

// Concurrent writers share commits; one that fails or panics gets its own error and
// stores nothing, and every other write is stored.
func TestCommitterGroupsWritesAndIsolatesFailures(t *testing.T) {
	bdb, c := openCommitter(t)
	txIDs := sync.Map{}
	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = c.update(func(tx *bbolt.Tx) error {
				txIDs.Store(tx.ID(), true)
				if err := tx.Bucket([]byte("b")).Put(fmt.Appendf(nil, "k%03d", i), []byte("v")); err != nil {
					return err
				}
				switch i % 50 {
				case 7:
					return errors.New("refused")
				case 8:
					panic("boom")
				}
				return nil
			})
		})
	}
	wg.Wait()
	commits := 0
	txIDs.Range(func(any, any) bool { commits++; return true })
	if commits >= n {
		t.Errorf("%d writes took %d transactions: no grouping", n, commits)
	}
	err := bdb.View(func(tx *bbolt.Tx) error {
		for i := range n {
			stored := tx.Bucket([]byte("b")).Get(fmt.Appendf(nil, "k%03d", i)) != nil
			switch i % 50 {
			case 7, 8:
				if errs[i] == nil || stored {
					t.Errorf("write %d: error %v, stored %v", i, errs[i], stored)
				}
			default:
				if errs[i] != nil || !stored {
					t.Errorf("write %d: error %v, stored %v", i, errs[i], stored)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCommitterRefusesWritesAfterStop(t *testing.T) {
	_, c := openCommitter(t)
	c.stop()
	if err := c.update(func(*bbolt.Tx) error { return nil }); !errors.Is(err, bbolt.ErrDatabaseNotOpen) {
		t.Fatalf("update after stop: %v", err)
	}
}
