package bolt

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

// TestNoSpaceKeepsTheErrno: a full disk and a disk I/O error stay findable by their errno
// whether bbolt wrapped it (a page write's *PathError) or formatted it away with %s
// (growing or syncing the file), so a job retries them (service.TransientStorage) and the
// server answers 507 for the first; another error is returned as it is.
func TestNoSpaceKeepsTheErrno(t *testing.T) {
	for _, c := range []struct {
		err  error
		want error // nil: returned as it is
	}{
		{&fs.PathError{Op: "write", Path: "voiceapi.db", Err: syscall.ENOSPC}, syscall.ENOSPC},
		{fmt.Errorf("file resize error: %s", syscall.ENOSPC), syscall.ENOSPC},
		{&fs.PathError{Op: "write", Path: "voiceapi.db", Err: syscall.EIO}, syscall.EIO},
		{fmt.Errorf("file sync error: %s", syscall.EIO), syscall.EIO},
		{fmt.Errorf("file resize error: %s", syscall.EIO), syscall.EIO},
		{errors.New("page 7 already freed"), nil},
	} {
		got := noSpace(c.err)
		if c.want == nil {
			if got != c.err {
				t.Errorf("noSpace(%q) = %v, want it as it is", c.err, got)
			}
			continue
		}
		if !errors.Is(got, c.want) || got.Error() == "" {
			t.Errorf("noSpace(%q) = %v: not findable as %v", c.err, got, c.want)
		}
	}
}
