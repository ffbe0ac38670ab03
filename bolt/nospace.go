package bolt

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// noSpace makes a full disk findable with errors.Is(err, syscall.ENOSPC), which the
// server maps to 507, and a disk I/O error with errors.Is(err, syscall.EIO), which a job
// retries as PostgreSQL's class 58 (service.TransientStorage). bbolt returns the write's
// own error when a commit cannot write its pages (a *PathError wrapping the errno), but
// formats the errors of growing and syncing the file with %s, which loses the errno:
// those are recognised by its text.
func noSpace(err error) error {
	if err == nil {
		return nil
	}
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		if errors.Is(err, errno) {
			return err
		}
		if strings.Contains(err.Error(), errno.Error()) {
			return fmt.Errorf("%w: %v", errno, err)
		}
	}
	return err
}
