package bolt

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// FilesDir is the folder of the data directory that holds stored files (knowledge-base
// originals, conventions §8); a backup carries all of it.
const FilesDir = "files"

// ArchiveFormat is the version of the backup archive's layout, in its manifest.
const ArchiveFormat = 1

// ManifestName is the archive member describing the others. It is the last member: the
// checksums are computed while the members stream, so the backup is written in one pass
// and never needs the whole archive in memory or on disk.
const ManifestName = "manifest.json"

// Manifest describes a backup archive.
type Manifest struct {
	Format        int       `json:"format"`
	SchemaVersion int       `json:"schema_version"`
	CreatedAt     time.Time `json:"created_at"`
	// SecretKeyIncluded tells whether secret.key is in the archive; without it the
	// restored credentials need the original key (file or VOICEAPI_SECRET_KEY).
	SecretKeyIncluded bool             `json:"secret_key_included"`
	Members           []ManifestMember `json:"members"`
}

// ManifestMember is one file of the archive with its size and SHA-256.
type ManifestMember struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Snapshot is a consistent copy of the database together with open handles on the stored
// files, ready to be written as a tar.gz archive. It implements data.BackupArchive.
type Snapshot struct {
	createdAt time.Time
	schema    int
	db        *os.File // the spooled copy of the database, already unlinked
	dbSize    int64
	files     []snapshotFile
	key       []byte // secret.key's content; nil when excluded or absent
}

type snapshotFile struct {
	name string // archive name, slash-separated, under files/
	f    *os.File
	size int64
}

var _ data.BackupService = (*DB)(nil)

// Backup takes an online backup while the server keeps serving (data.BackupService).
func (db *DB) Backup(ctx context.Context, opts data.BackupOptions) (data.BackupArchive, error) {
	return takeSnapshot(db.bolt, db.dir, db.now(), opts)
}

// BackupStopped writes a backup of the data directory of a stopped server to w. The
// database is opened read-only, so that a backup taken before an upgrade holds the old
// schema untouched; a running server's lock makes it fail fast with ErrLocked.
func BackupStopped(dir string, w io.Writer, opts data.BackupOptions) (*Manifest, error) {
	if err := checkRestoreFinished(dir); err != nil {
		return nil, err
	}
	dbPath := filepath.Join(dir, FileName)
	if _, err := os.Stat(dbPath); err != nil {
		return nil, fmt.Errorf("no database to back up: %w", err)
	}
	bdb, err := bbolt.Open(dbPath, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 2 * time.Second})
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s is locked; for a running server use GET /api/v1/admin/backup", ErrLocked, dbPath)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dbPath, err)
	}
	defer bdb.Close()
	snap, err := takeSnapshot(bdb, dir, time.Now(), opts)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	return snap.write(w)
}

// takeSnapshot copies the database as of one read transaction and opens every stored
// file. The copy is spooled to an unlinked temporary file in the data directory rather
// than streamed from the transaction to the client: a read transaction that stays open
// while a slow client downloads would block writers whenever bbolt must grow its memory
// map, so the transaction lasts only as long as a local copy.
//
// Files: the archive holds every file present under files/ when the snapshot is taken,
// not only those the snapshot's records reference. A stored file is written and fsynced
// before the metadata naming it commits, and removed only after the metadata is gone,
// so every file the snapshot references is on disk when its transaction begins; the
// files are listed and opened right then, before the database is copied, and an open
// handle keeps a file readable even if it is unlinked afterwards. Files whose metadata
// has not committed yet come along too, as harmless orphans. Taking all files needs no
// knowledge of which records name files, so it stays right as resources are added.
func takeSnapshot(bdb *bbolt.DB, dir string, now time.Time, opts data.BackupOptions) (*Snapshot, error) {
	spool, err := os.CreateTemp(dir, ".backup-*.db")
	if err != nil {
		return nil, fmt.Errorf("creating the backup spool file: %w", err)
	}
	// Unlinked at once: the handle is all we need, and a crash leaves nothing behind.
	os.Remove(spool.Name())
	snap := &Snapshot{createdAt: now.UTC(), db: spool}
	err = bdb.View(func(tx *bbolt.Tx) error {
		if meta := tx.Bucket(bucketMeta); meta != nil {
			if v := meta.Get([]byte("schema_version")); len(v) == 8 {
				snap.schema = int(binary.BigEndian.Uint64(v))
			}
		}
		if err := snap.openFiles(dir); err != nil {
			return err
		}
		n, err := tx.WriteTo(spool)
		snap.dbSize = n
		return err
	})
	if err == nil {
		_, err = spool.Seek(0, io.SeekStart)
	}
	if err == nil && !opts.ExcludeSecretKey {
		snap.key, err = os.ReadFile(filepath.Join(dir, SecretKeyFile))
		if errors.Is(err, fs.ErrNotExist) {
			// The key comes from VOICEAPI_SECRET_KEY: there is no file to include.
			snap.key, err = nil, nil
		}
	}
	if err != nil {
		snap.Close()
		return nil, fmt.Errorf("taking a backup snapshot: %w", err)
	}
	return snap, nil
}

// openFiles opens every regular file under dir/files. A file removed between listing and
// opening was deleted by a transaction later than the snapshot's: it is skipped.
func (s *Snapshot) openFiles(dir string) error {
	root := filepath.Join(dir, FilesDir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		s.files = append(s.files, snapshotFile{name: filepath.ToSlash(rel), f: f, size: fi.Size()})
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing stored files: %w", err)
	}
	return nil
}

// Name returns the archive's file name.
func (s *Snapshot) Name() string {
	return "voiceapi-backup-" + s.createdAt.Format("20060102T150405Z") + ".tar.gz"
}

// WriteTo streams the archive to w (data.BackupArchive).
func (s *Snapshot) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	_, err := s.write(cw)
	return cw.n, err
}

// Close releases the spooled copy and the file handles.
func (s *Snapshot) Close() error {
	for _, f := range s.files {
		f.f.Close()
	}
	s.files = nil
	if s.db != nil {
		s.db.Close()
		s.db = nil
	}
	return nil
}

// write streams the members, then the manifest with their checksums, as tar.gz.
func (s *Snapshot) write(w io.Writer) (*Manifest, error) {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	m := &Manifest{Format: ArchiveFormat, SchemaVersion: s.schema, CreatedAt: s.createdAt, SecretKeyIncluded: s.key != nil}
	add := func(name string, size int64, r io.Reader) error {
		hdr := &tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: s.createdAt, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(tw, h), io.LimitReader(r, size))
		if err != nil {
			return fmt.Errorf("archiving %s: %w", name, err)
		}
		if n != size {
			return fmt.Errorf("archiving %s: %d bytes, expected %d (was it changed while being backed up?)", name, n, size)
		}
		m.Members = append(m.Members, ManifestMember{Name: name, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))})
		return nil
	}
	if err := add(FileName, s.dbSize, s.db); err != nil {
		return nil, err
	}
	if s.key != nil {
		if err := add(SecretKeyFile, int64(len(s.key)), bytes.NewReader(s.key)); err != nil {
			return nil, err
		}
	}
	for _, f := range s.files {
		if err := add(f.name, f.size, f.f); err != nil {
			return nil, err
		}
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	hdr := &tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(raw)), ModTime: s.createdAt, Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(raw); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return m, nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// validMemberName accepts only what a backup writes: the manifest, the database, the key
// file and clean relative paths under files/. Anything else (absolute paths, "..",
// unknown names) is refused, so an archive cannot write outside the data directory.
func validMemberName(name string) bool {
	switch name {
	case ManifestName, FileName, SecretKeyFile:
		return true
	}
	if path.Clean(name) != name || path.IsAbs(name) || !fs.ValidPath(name) {
		return false
	}
	rest, ok := strings.CutPrefix(name, FilesDir+"/")
	return ok && rest != ""
}
