package bolt

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// noSpace makes a full disk findable with errors.Is(err, syscall.ENOSPC), which the
// server maps to 507. bbolt returns the write's own error when a commit cannot write its
// pages (a *PathError wrapping ENOSPC), but formats the error of growing the file with
// %s, which loses the errno: that one is recognised by its text.
func noSpace(err error) error {
	if err == nil || errors.Is(err, syscall.ENOSPC) {
		return err
	}
	if strings.Contains(err.Error(), syscall.ENOSPC.Error()) {
		return fmt.Errorf("%w: %v", syscall.ENOSPC, err)
	}
	return err
}
