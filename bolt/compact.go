package bolt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"
)

// CompactOptions tune Compact. The zero value is what `voiceapi compact` does.
type CompactOptions struct {
	// KeepOld keeps the replaced file beside the new one as voiceapi.db.old-<UTC time>.
	KeepOld bool
	// Progress, when set, is called as the copy advances: done and total are bytes of
	// keys and values.
	Progress func(done, total int64)
	// LockTimeout bounds the wait for the file's lock; 3s when 0.
	LockTimeout time.Duration
	// SwapGrace is how long the replaced file stays locked after the swap; 3.5s when 0,
	// none when negative. A server started just before the swap opened the old file and
	// waits for its lock: it must time out (bolt.Open's default wait is 3s) rather than get
	// the lock on a file that is no longer voiceapi.db and serve from it.
	SwapGrace time.Duration
	// TxMaxSize bounds the bytes of keys and values copied in one transaction of the new
	// file, which bounds memory on a large database; 64 MiB when 0.
	TxMaxSize int64
}

// CompactResult says what a compaction did.
type CompactResult struct {
	Before, After int64 // file sizes in bytes
	// InUseBefore and InUseAfter are the bytes of the pages holding data, FreeBefore and
	// FreeAfter those of the free pages below the file's high-water mark. bbolt grows a
	// file in steps (doubling from 32 KiB up to 16 MiB), so a small database's file can keep
	// its size while its free pages go: these say what the compaction gave back.
	InUseBefore, InUseAfter int64
	FreeBefore, FreeAfter   int64
	Keys                    int64  // keys copied, nested buckets' included
	DataBytes               int64  // bytes of keys and values copied
	OldPath                 string // where the replaced file was kept ("" unless KeepOld)
}

// compactTempPattern names the new file while it is written: never voiceapi.db, so a
// crash at any moment leaves voiceapi.db whole (the old file, or after the rename the new).
const compactTempPattern = FileName + ".compact-*"

// Compact rewrites the database in dir into a new file holding only its live pages
// (bbolt's compaction: every bucket and key copied in order into full pages), then swaps
// it in: the new file is fsynced, checked, renamed over voiceapi.db, and the directory
// fsynced. The server must be stopped: the file is opened with its exclusive lock, and a
// held lock fails within LockTimeout with ErrLocked. On any error before the rename the
// temporary file is removed and voiceapi.db is untouched (it is only ever read).
func Compact(dir string, o CompactOptions) (res CompactResult, err error) {
	if o.LockTimeout == 0 {
		o.LockTimeout = 3 * time.Second
	}
	if o.SwapGrace == 0 {
		o.SwapGrace = 3500 * time.Millisecond
	}
	if o.TxMaxSize == 0 {
		o.TxMaxSize = 64 << 20
	}
	if err := checkRestoreFinished(dir); err != nil {
		return res, err
	}
	path := filepath.Join(dir, FileName)
	fi, err := os.Stat(path)
	if err != nil {
		return res, fmt.Errorf("no database at %s: %w", path, err)
	}
	res.Before = fi.Size()
	// Read-write only for its exclusive lock, which keeps a server (and a second
	// compaction) out until the swap is done: nothing writes to this file.
	src, err := bbolt.Open(path, fi.Mode().Perm(), &bbolt.Options{Timeout: o.LockTimeout})
	if errors.Is(err, bbolt.ErrTimeout) {
		return res, fmt.Errorf("%w: %s is locked (is `voiceapi serve` running on it?); stop the server first", ErrLocked, path)
	}
	if err != nil {
		return res, fmt.Errorf("opening %s: %w", path, err)
	}
	swapped := false
	defer func() {
		if swapped && o.SwapGrace > 0 {
			time.Sleep(o.SwapGrace)
		}
		if cerr := src.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()

	tmp, err := os.CreateTemp(dir, compactTempPattern)
	if err != nil {
		return res, fmt.Errorf("creating the compacted file: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer func() {
		if !swapped {
			os.Remove(tmpPath)
		}
	}()
	if err := os.Chmod(tmpPath, fi.Mode().Perm()); err != nil {
		return res, err
	}
	if err := matchOwner(tmpPath, fi); err != nil {
		return res, fmt.Errorf("giving the compacted file the owner of %s: %w", path, err)
	}
	if res.InUseBefore, res.FreeBefore, err = pages(src); err != nil {
		return res, err
	}
	if res.Keys, res.DataBytes, res.InUseAfter, res.FreeAfter, err = compactInto(tmpPath, src, o); err != nil {
		return res, err
	}
	if err := syncPath(tmpPath); err != nil {
		return res, err
	}
	if o.KeepOld {
		// A second name for the old file before the rename replaces the first: a crash in
		// between leaves voiceapi.db as it was, plus this link.
		res.OldPath = path + ".old-" + time.Now().UTC().Format("20060102T150405Z")
		if err := os.Link(path, res.OldPath); err != nil {
			return res, fmt.Errorf("keeping the old file: %w", err)
		}
	}
	if err := os.Rename(tmpPath, path); err != nil {
		if res.OldPath != "" {
			os.Remove(res.OldPath) // only a second name: voiceapi.db is still the file
			res.OldPath = ""
		}
		return res, fmt.Errorf("replacing %s: %w", path, err)
	}
	swapped = true
	if err := syncPath(dir); err != nil {
		return res, fmt.Errorf("the compacted file is in place, but syncing %s failed: %w", dir, err)
	}
	if fi, err := os.Stat(path); err == nil {
		res.After = fi.Size()
	}
	return res, nil
}

// compactInto copies src into a new bbolt file at path and verifies it: the same number
// of keys and bytes as the source, and a clean consistency check. It returns the keys and
// bytes copied and the new file's pages in use and free. The copy runs without fsync; the
// caller syncs the finished file once.
func compactInto(path string, src *bbolt.DB, o CompactOptions) (keys, bytes, inUse, free int64, err error) {
	total, totalKeys, err := measure(src)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	dst, err := bbolt.Open(path, 0o600, &bbolt.Options{NoSync: true, FreelistType: bbolt.FreelistMapType})
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("opening the compacted file: %w", err)
	}
	defer func() {
		if cerr := dst.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing the compacted file: %w", cerr)
		}
	}()
	if o.Progress != nil {
		o.Progress(0, total)
	}
	if keys, bytes, err = copyAll(dst, src, o.TxMaxSize, func(done int64) {
		if o.Progress != nil {
			o.Progress(done, total)
		}
	}); err != nil {
		return keys, bytes, 0, 0, fmt.Errorf("writing the compacted file: %w", err)
	}
	if keys != totalKeys || bytes != total {
		return keys, bytes, 0, 0, fmt.Errorf("the compacted file holds %d keys (%d bytes), the database %d (%d bytes)", keys, bytes, totalKeys, total)
	}
	if err := dst.Sync(); err != nil {
		return keys, bytes, 0, 0, fmt.Errorf("syncing the compacted file: %w", err)
	}
	err = dst.View(func(tx *bbolt.Tx) error {
		for fault := range tx.Check() {
			// Drain the channel: Check's goroutine holds the transaction until the end.
			if err == nil {
				err = fmt.Errorf("the compacted file failed its consistency check: %w", fault)
			}
		}
		return err
	})
	if err != nil {
		return keys, bytes, 0, 0, err
	}
	inUse, free, err = pages(dst)
	return keys, bytes, inUse, free, err
}

// pages returns the bytes of db's pages that hold data and of its free (and pending)
// pages, both below the high-water mark. The file is usually larger: bbolt grows it in
// steps.
func pages(db *bbolt.DB) (inUse, free int64, err error) {
	var size int64
	err = db.View(func(tx *bbolt.Tx) error {
		size = tx.Size()
		return nil
	})
	st := db.Stats()
	free = int64(st.FreePageN+st.PendingPageN) * int64(db.Info().PageSize)
	return size - free, free, err
}

// measure returns the bytes of keys and values, and the number of keys, in db.
func measure(db *bbolt.DB) (bytes, keys int64, err error) {
	err = db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			return walkBucket(b, func(k, v []byte) error {
				bytes += int64(len(k) + len(v))
				keys++
				return nil
			})
		})
	})
	return bytes, keys, err
}

// walkBucket calls fn for every key of b and, depth first, of its nested buckets (whose
// own key comes with a nil value).
func walkBucket(b *bbolt.Bucket, fn func(k, v []byte) error) error {
	return b.ForEach(func(k, v []byte) error {
		if err := fn(k, v); err != nil {
			return err
		}
		if v == nil {
			return walkBucket(b.Bucket(k), fn)
		}
		return nil
	})
}

// copyAll is bbolt.Compact with a progress callback: every bucket (with its sequence) and
// key of src, in key order, into full pages of dst, committing every txMaxSize bytes.
func copyAll(dst, src *bbolt.DB, txMaxSize int64, progress func(done int64)) (keys, done int64, err error) {
	tx, err := dst.Begin(true)
	if err != nil {
		return 0, 0, err
	}
	defer func() { tx.Rollback() }() // after a commit this is a no-op returning ErrTxClosed
	var inTx int64
	lastReport := time.Now()
	var copyBucket func(path [][]byte, from *bbolt.Bucket) error
	copyBucket = func(path [][]byte, from *bbolt.Bucket) error {
		return from.ForEach(func(k, v []byte) error {
			sz := int64(len(k) + len(v))
			if inTx > 0 && inTx+sz > txMaxSize {
				if err := tx.Commit(); err != nil {
					return err
				}
				if tx, err = dst.Begin(true); err != nil {
					return err
				}
				inTx = 0
			}
			inTx += sz
			keys++
			done += sz
			if time.Since(lastReport) > 50*time.Millisecond {
				progress(done)
				lastReport = time.Now()
			}
			// The transaction may be new: find the parent bucket again from the root.
			to := tx.Bucket(path[0])
			for _, p := range path[1:] {
				to = to.Bucket(p)
			}
			// Keys arrive in order, so full pages lose nothing to later inserts.
			to.FillPercent = 1.0
			if v != nil {
				return to.Put(k, v)
			}
			nested := from.Bucket(k)
			nb, err := to.CreateBucket(k)
			if err != nil {
				return err
			}
			if err := nb.SetSequence(nested.Sequence()); err != nil {
				return err
			}
			return copyBucket(append(path[:len(path):len(path)], k), nested)
		})
	}
	err = src.View(func(stx *bbolt.Tx) error {
		return stx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			nb, err := tx.CreateBucket(name)
			if err != nil {
				return err
			}
			if err := nb.SetSequence(b.Sequence()); err != nil {
				return err
			}
			return copyBucket([][]byte{name}, b)
		})
	})
	if err != nil {
		return keys, done, err
	}
	if err := tx.Commit(); err != nil {
		return keys, done, err
	}
	progress(done)
	return keys, done, nil
}

// syncPath fsyncs a file or a directory by name.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	return f.Close()
}
