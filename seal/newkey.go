package seal

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/voiceapi/voiceapi/internal/fsync"
)

// keyLockFile is locked by every process that reads or creates the key file, for as long
// as a key it created is not yet settled (NewKey). Its holder removes it as it releases
// it, so a data directory at rest holds no lock file.
const keyLockFile = ".secret.key.lock"

// NewKey is a key file this process has just created, whose key the database has not
// yet accepted. Until Keep or Remove, the data directory's key lock stays held, so no
// other process sharing the directory reads the key and gets it accepted meanwhile:
// removing the file cannot take a key from under another process.
type NewKey struct {
	dir     string
	key     []byte
	unlock  func()
	guarded bool
}

// Guarded reports whether the lock holds other processes off (false where the
// filesystem has no locks): only then may a key that merely failed to reach the database
// be removed. A key the database refused may be removed either way: no process can use it.
func (n *NewKey) Guarded() bool { return n.guarded }

// Keep leaves the key file and releases the lock: the database accepted the key, or may
// have (a failure whose outcome is unknown).
func (n *NewKey) Keep() { n.unlock() }

// Remove removes the key file if it still holds this key, then releases the lock.
func (n *NewKey) Remove() error {
	defer n.unlock()
	return removeKeyFile(n.dir, n.key)
}

// LoadKeyFile returns the key in dir's key file, creating the file with a new key when
// there is none; it waits (until ctx ends) while another process settles a key it created.
// fresh is non-nil when this call made the file: the caller must Keep or Remove it.
func LoadKeyFile(ctx context.Context, dir string) (key []byte, fresh *NewKey, err error) {
	unlock, guarded, err := lockKeyDir(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	key, created, err := loadOrCreate(filepath.Join(dir, KeyFile))
	if err != nil || !created {
		unlock()
		return key, nil, err
	}
	return key, &NewKey{dir: dir, key: key, unlock: unlock, guarded: guarded}, nil
}

// loadOrCreateKeyFile returns the key of the key file at path, creating it if need be:
// for an engine that takes the key as soon as it is made (bbolt's own file).
func loadOrCreateKeyFile(path string) ([]byte, error) {
	unlock, _, err := lockKeyDir(context.Background(), filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer unlock()
	key, _, err := loadOrCreate(path)
	return key, err
}

// removeKeyFile removes dir's key file if it still holds key. A file with another key, or
// none, is left as it is.
func removeKeyFile(dir string, key []byte) error {
	path := filepath.Join(dir, KeyFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if held, err := parseKey(strings.TrimSpace(string(raw))); err != nil || !bytes.Equal(held, key) {
		return nil
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	return fsync.Dir(dir)
}
