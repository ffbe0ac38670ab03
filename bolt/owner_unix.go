//go:build unix

package bolt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// matchOwner gives path (and what is under it) the owner of ref, when this process may
// (root) and they differ. Run as root on the service's directory (`compact`, `restore`),
// a command made root's files there, which the service user then could not open: the
// server stopped starting with "permission denied".
func matchOwner(path string, ref fs.FileInfo) error {
	st, ok := ref.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 || int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid() {
		return nil
	}
	return filepath.WalkDir(path, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(st.Uid), int(st.Gid))
	})
}

// newDirOwner is whose the data directory dir, which does not exist yet, becomes when a
// restore makes it: nil (this process's) unless run as root. Run as root, dir takes its
// parent's owner when that is another user (a home directory, a volume the service user
// owns); under a root-owned parent (/var/lib) nothing says who the service user is, and
// a directory made as root kept the server from starting ("permission denied"): refused,
// with the commands that make it right.
func newDirOwner(dir string) (fs.FileInfo, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	parent, err := os.Stat(filepath.Dir(dir))
	if err == nil {
		if st, ok := parent.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
			return parent, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return nil, fmt.Errorf("%s does not exist, and made by root it would be root's: the server, run as its service user, could not open it. Create it for the service user and restore as that user: sudo install -d -o voiceapi -g voiceapi -m 0700 %s && sudo -u voiceapi voiceapi restore --data %s --in … (for a server run as root, make it first: mkdir -m 0700 %s)", dir, dir, dir, dir)
}
