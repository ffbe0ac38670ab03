package bolt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"syscall"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
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

// TestTransactionsOwnErrorKeepsItsKind: an error the transaction's function returns is its
// own, returned as it is, whatever its words: a conflict whose message quotes a name such
// as "no space left on device" stays that conflict, neither a full disk (507) nor an I/O
// error (a job's retry), and keeps its code. Before, the text test made it an errno and
// its chain was lost (%v), so the server answered 507 or 500. Alone and grouped.
func TestTransactionsOwnErrorKeepsItsKind(t *testing.T) {
	db, err := Open(t.TempDir(), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, words := range []string{syscall.ENOSPC.Error(), syscall.EIO.Error()} {
		own := data.Errorf(data.ECONFLICT, "An agent named %q already exists.", words)
		var wg sync.WaitGroup
		errs := make([]error, 8) // some commit in a group, the failing one then alone
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = db.Update(context.Background(), func(service.Tx) error {
					if i == 0 {
						return own
					}
					return nil
				})
			}()
		}
		wg.Wait()
		if errs[0] != own {
			t.Errorf("the function's %q: Update returned %v (ENOSPC %v, EIO %v); want it as it is", own, errs[0],
				errors.Is(errs[0], syscall.ENOSPC), errors.Is(errs[0], syscall.EIO))
		}
		for _, err := range errs[1:] {
			if err != nil {
				t.Errorf("another function of the group: %v", err)
			}
		}
	}
}
