package bolt

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/internal/fsync"
)

// ErrNotEmpty is returned when a restore's target directory already holds data.
var ErrNotEmpty = errors.New("the data directory is not empty")

// ErrRestoreUnfinished is returned when opening a directory that a restore was replacing
// when it stopped: it may hold the restored database beside the old key file or files.
var ErrRestoreUnfinished = errors.New("a restore into this data directory did not finish")

// restoreMarker is written into a non-empty target before a forced restore replaces
// anything there, and removed once every entry is in place. The entries are renamed one by
// one, so a restore killed between two leaves the directory part old, part restored (the
// old database beside the restored key: its credentials unreadable, its audit chain
// failing); the marker keeps a server and the offline commands off it until a restore
// finishes. It holds the name of the staging directory, which the next restore removes.
const restoreMarker = ".voiceapi-restore-unfinished"

// checkRestoreFinished refuses a directory holding the marker of a restore cut short.
func checkRestoreFinished(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, restoreMarker)); err == nil {
		return fmt.Errorf("%w: %s holds parts of the old data and parts of the archive; run `voiceapi restore --data %s --in <archive> --force` again", ErrRestoreUnfinished, dir, dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// restoreStep, when set (by tests), is called after each entry is moved into place; an
// error stops the restore there, as a kill would.
var restoreStep func(name string) error

// RestoreOptions tune Restore.
type RestoreOptions struct {
	// Force restores into a non-empty directory, replacing its database, key file and
	// stored files. Other files there are left alone.
	Force bool
}

// maxManifest bounds the manifest read into memory.
const maxManifest = 64 << 20

// Restore unpacks a backup archive into dir, which must be empty or absent unless
// opts.Force. Everything is first extracted to a staging directory and checked (every member against
// the manifest's SHA-256, the database against bbolt's consistency check), and only then
// moved into place, so a damaged archive leaves dir as it was. Migrations are not run
// here: they run when the server next opens the database.
func Restore(dir string, r io.Reader, opts RestoreOptions) (*Manifest, error) {
	dir = filepath.Clean(dir)
	// The old database stays locked until the new one is in place, so that a server
	// started meanwhile fails rather than opening a file about to be replaced.
	held, err := checkRestoreTarget(dir, opts.Force)
	if err != nil {
		return nil, err
	}
	if held != nil {
		defer held.Close()
	}
	removeStaleStaging(dir)
	// Stage inside dir when it exists (the service user may own dir but not its parent,
	// as with systemd's StateDirectory), else beside it: on the same filesystem either
	// way, so moving into place is a rename.
	stageIn := dir
	var newDirRef fs.FileInfo // whose a directory made here becomes
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if newDirRef, err = newDirOwner(dir); err != nil {
			return nil, err
		}
		stageIn = filepath.Dir(dir)
		if err := os.MkdirAll(stageIn, 0o700); err != nil {
			return nil, err
		}
	}
	staging, err := os.MkdirTemp(stageIn, ".voiceapi-restore-*")
	if err != nil {
		return nil, fmt.Errorf("creating a staging directory: %w", err)
	}
	defer os.RemoveAll(staging)

	m, err := extract(staging, r)
	if err != nil {
		return nil, err
	}
	if err := checkDatabase(filepath.Join(staging, FileName)); err != nil {
		return nil, err
	}
	// Restored into an existing directory, the files take its owner: the service user's,
	// also when root ran the restore.
	if target, err := os.Stat(dir); err == nil {
		if err := matchOwner(staging, target); err != nil {
			return nil, fmt.Errorf("giving the restored files the owner of %s: %w", dir, err)
		}
	} else if newDirRef != nil {
		if err := matchOwner(staging, newDirRef); err != nil {
			return nil, fmt.Errorf("giving %s the owner of its parent: %w", dir, err)
		}
	}
	if err := moveIntoPlace(staging, dir); err != nil {
		return nil, err
	}
	return m, nil
}

// checkRestoreTarget refuses a non-empty directory without force, and a database that a
// running server holds even with it.
// The database found there is returned open, holding its lock.
func checkRestoreTarget(dir string, force bool) (*bbolt.DB, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, nil
	}
	if !force {
		return nil, fmt.Errorf("%w: %s (use --force to replace its data)", ErrNotEmpty, dir)
	}
	dbPath := filepath.Join(dir, FileName)
	if _, err := os.Stat(dbPath); err == nil {
		bdb, err := bbolt.Open(dbPath, 0o600, &bbolt.Options{Timeout: time.Second})
		if errors.Is(err, bbolt.ErrTimeout) {
			return nil, fmt.Errorf("%w: %s; stop the server before restoring", ErrLocked, dbPath)
		}
		if err == nil {
			return bdb, nil
		}
	}
	return nil, nil
}

// removeStaleStaging removes the staging directory of a restore cut short while moving
// into dir (named by its marker): a whole copy of the archive's database and key.
func removeStaleStaging(dir string) {
	name, err := os.ReadFile(filepath.Join(dir, restoreMarker))
	if err != nil {
		return
	}
	if n := string(name); strings.HasPrefix(n, ".voiceapi-restore-") && n == filepath.Base(n) && n != restoreMarker {
		os.RemoveAll(filepath.Join(dir, n))
	}
}

// extract unpacks the archive into staging, hashing each member as it is written, then
// checks the members against the manifest.
func extract(staging string, r io.Reader) (*Manifest, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a backup archive (gzip): %w", err)
	}
	tr := tar.NewReader(gz)
	type got struct {
		size int64
		sum  string
	}
	members := map[string]got{}
	var m *Manifest
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the archive: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg || !validMemberName(hdr.Name) {
			return nil, fmt.Errorf("the archive holds an unexpected member %q", hdr.Name)
		}
		if _, dup := members[hdr.Name]; dup || (hdr.Name == ManifestName && m != nil) {
			return nil, fmt.Errorf("the archive holds %q twice", hdr.Name)
		}
		if hdr.Name == ManifestName {
			raw, err := io.ReadAll(io.LimitReader(tr, maxManifest))
			if err != nil {
				return nil, fmt.Errorf("reading the manifest: %w", err)
			}
			m = &Manifest{}
			if err := json.Unmarshal(raw, m); err != nil {
				return nil, fmt.Errorf("reading the manifest: %w", err)
			}
			continue
		}
		size, sum, err := writeMember(filepath.Join(staging, filepath.FromSlash(hdr.Name)), tr)
		if err != nil {
			return nil, fmt.Errorf("extracting %s: %w", hdr.Name, err)
		}
		members[hdr.Name] = got{size, sum}
	}
	if m == nil {
		return nil, errors.New("the archive has no manifest: not a voiceapi backup, or truncated")
	}
	if m.Format != ArchiveFormat {
		return nil, fmt.Errorf("archive format %d is not supported by this voiceapi (it reads %d)", m.Format, ArchiveFormat)
	}
	if m.SchemaVersion > schemaVersion {
		return nil, fmt.Errorf("the backup has schema version %d, newer than this voiceapi (%d): restore it with a newer voiceapi", m.SchemaVersion, schemaVersion)
	}
	listed := map[string]bool{}
	for _, mm := range m.Members {
		g, ok := members[mm.Name]
		if !ok {
			return nil, fmt.Errorf("the manifest lists %s, which the archive lacks", mm.Name)
		}
		if g.size != mm.Size || g.sum != mm.SHA256 {
			return nil, fmt.Errorf("checksum mismatch for %s: the archive is damaged", mm.Name)
		}
		listed[mm.Name] = true
	}
	for name := range members {
		if !listed[name] {
			return nil, fmt.Errorf("the archive holds %s, which the manifest does not list", name)
		}
	}
	if !listed[FileName] {
		return nil, fmt.Errorf("the archive holds no %s", FileName)
	}
	if err := fsync.Dir(staging); err != nil {
		return nil, err
	}
	return m, nil
}

// writeMember writes r to path (mode 0600, parents 0700), fsynced, and returns its size
// and SHA-256.
func writeMember(path string, r io.Reader) (int64, string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, hex.EncodeToString(h.Sum(nil)), err
}

// checkDatabase opens the restored database and runs bbolt's consistency check.
func checkDatabase(path string) error {
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("the restored database does not open: %w", err)
	}
	defer bdb.Close()
	return bdb.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			return fmt.Errorf("the restored database fails the consistency check: %w", err)
		}
		if tx.Bucket(bucketMeta) == nil {
			return errors.New("the restored database is not a voiceapi database (no meta bucket)")
		}
		return nil
	})
}

// moveIntoPlace renames the staged data into dir: the whole directory when dir does not
// exist, else each restored entry, replacing what dir held under that name.
func moveIntoPlace(staging, dir string) error {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(staging, dir); err != nil {
			return fmt.Errorf("moving the restored data into place: %w", err)
		}
		return fsync.Dir(filepath.Dir(dir))
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	marker := filepath.Join(dir, restoreMarker)
	if err := writeMarker(marker, filepath.Base(staging)); err != nil {
		return fmt.Errorf("marking the restore under way: %w", err)
	}
	if err := fsync.Dir(dir); err != nil {
		return err
	}
	// Stored files of the replaced data belong to records that are gone: drop them even
	// when the archive has none.
	if err := os.RemoveAll(filepath.Join(dir, FilesDir)); err != nil {
		return err
	}
	entries, err := os.ReadDir(staging)
	if err != nil {
		return err
	}
	for _, e := range entries {
		target := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(target); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(staging, e.Name()), target); err != nil {
			return fmt.Errorf("moving %s into place: %w", e.Name(), err)
		}
		if restoreStep != nil {
			if err := restoreStep(e.Name()); err != nil {
				return err
			}
		}
	}
	// Every entry is in place (and on disk) before the marker goes.
	if err := fsync.Dir(dir); err != nil {
		return err
	}
	if err := os.Remove(marker); err != nil {
		return err
	}
	return fsync.Dir(dir)
}

// writeMarker writes the restore marker, fsynced, naming the staging directory.
func writeMarker(path, staging string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(staging); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
