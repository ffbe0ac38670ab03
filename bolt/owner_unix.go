//go:build unix

package bolt

import (
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
