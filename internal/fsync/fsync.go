// Package fsync holds what makes a file's name, not only its bytes, survive a crash; the
// storage engine (bolt) and the secret key file (seal) share it.
package fsync

import (
	"fmt"
	"os"
)

// Dir fsyncs a directory, so that the names created, renamed or linked in it survive a
// crash.
func Dir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
