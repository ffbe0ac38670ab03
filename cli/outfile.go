package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// refuseOverwrite fails, before any work is done, when path exists and force is off: a
// second `backup --out` with the same name must not silently replace the first archive.
func refuseOverwrite(path string, force bool) error {
	if force {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return existsError(path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func existsError(path string) error {
	return fmt.Errorf("%s already exists; pass --force to replace it, or choose another --out", path)
}

// checkWritable fails when writeFileAtomically could not write path: its directory is
// missing or not writable, or path is a directory. A command that writes its output at
// the end of long work checks first.
func checkWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".voiceapi-"+filepath.Base(path)+"-*")
	if err != nil {
		return outDirError(path, err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// writeFileAtomically writes path through a temporary file beside it (mode 0600: the
// file may hold the secret key or credentials), fsynced and then put in place, so a
// failed write never leaves a file that looks complete. With force it replaces an
// existing file in one rename; without, it links the finished file under path, which
// fails if a file of that name appeared meanwhile: nothing is ever overwritten.
func writeFileAtomically(path string, force bool, write func(io.Writer) error) error {
	return writeFileAtomicallyPerm(path, force, 0o600, write)
}

// writeReadableFileAtomically is writeFileAtomically for files that hold no secret and
// are read by other programs and users (pulled configuration, a JUnit report): mode 0666
// less the umask, as os.WriteFile would give them.
func writeReadableFileAtomically(path string, force bool, write func(io.Writer) error) error {
	return writeFileAtomicallyPerm(path, force, 0o666, write)
}

func writeFileAtomicallyPerm(path string, force bool, perm fs.FileMode, write func(io.Writer) error) error {
	if err := refuseOverwrite(path, force); err != nil {
		return err
	}
	tmp, err := createTemp(filepath.Dir(path), ".voiceapi-"+filepath.Base(path)+"-", perm)
	if err != nil {
		return outDirError(path, err)
	}
	defer os.Remove(tmp.Name())
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if force {
		return os.Rename(tmp.Name(), path)
	}
	return placeNew(tmp.Name(), path)
}

// outDirError words a failure to create the temporary file beside path: the error named
// that file (".voiceapi-x.tgz-1212627980"), which the operator never asked for, not the
// file they named nor what to do.
func outDirError(path string, err error) error {
	dir := filepath.Dir(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s: the directory %s does not exist; create it first or choose another path", path, dir)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot write %s: no permission to create files in %s (the file is written beside its final name, then renamed); choose a directory this user may write to", path, dir)
	}
	return fmt.Errorf("cannot write %s: %w", path, err)
}

// createTemp is os.CreateTemp with the file's mode given (the umask applies), which
// os.CreateTemp fixes at 0600.
func createTemp(dir, prefix string, perm fs.FileMode) (*os.File, error) {
	for range 10000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("creating a temporary file in %s: too many names taken", dir)
}

// placeNew gives the finished temporary file the name path only if no file has it.
func placeNew(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		if err != nil {
			return existsError(path)
		}
		return nil
	}
	// A file system without hard links (some FUSE and network mounts): check, then
	// rename, which leaves only the short window between the two.
	if err := refuseOverwrite(path, false); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
