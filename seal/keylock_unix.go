//go:build unix

package seal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockKeyDir takes the exclusive lock on dir's key file, waiting until ctx is done while
// another process holds it. unlock removes the lock file and releases the lock. guarded is
// false where the filesystem has no locks: unlock then does nothing.
func lockKeyDir(ctx context.Context, dir string) (unlock func(), guarded bool, err error) {
	path := filepath.Join(dir, keyLockFile)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
			// A directory this process may not write (a read-only mount, another user's):
			// it reads the key as before, and could not create one anyway.
			return func() {}, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("locking the key file: %w", err)
		}
		if err := flockWait(ctx, f); err != nil {
			f.Close()
			if errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
				os.Remove(path)
				return func() {}, false, nil
			}
			return nil, false, fmt.Errorf("locking the key file %s: %w", path, err)
		}
		// The holder before us removed the file as it released it: a lock on a removed
		// file guards nothing, so lock the name's file anew.
		if held, err := f.Stat(); err == nil {
			if now, err := os.Stat(path); err == nil && os.SameFile(held, now) {
				return func() { os.Remove(path); f.Close() }, true, nil
			}
		}
		f.Close()
	}
}

// flockWait takes f's exclusive lock, polling while another process holds it: a blocking
// flock could not be given up when ctx ends (a start stopped by SIGTERM).
func flockWait(ctx context.Context, f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("another voiceapi holds it (creating the key, waiting for its database): %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
