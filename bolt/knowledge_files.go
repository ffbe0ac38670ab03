package bolt

// Original files of knowledge base sources live under <data dir>/files/<workspace>/<kb>/<source>,
// not inside bbolt (conventions §8): a 20 MiB upload would bloat the database file and
// every page copy of its transactions. They are written crash-safe before their metadata
// commits, removed after the commit that deletes their source, and an Open sweeps what a
// crash left behind.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/fsync"
)

// filesDir is the directory of source files inside the data directory.
const filesDir = "files"

// tmpPrefix starts the name of a file still being written; a sweep deletes such files.
const tmpPrefix = ".tmp-"

func (db *DB) kbDir(workspaceID, kbID string) string {
	return filepath.Join(db.dir, filesDir, workspaceID, kbID)
}

func (db *DB) sourceFilePath(workspaceID, kbID, sourceID string) string {
	return filepath.Join(db.kbDir(workspaceID, kbID), sourceID)
}

// writeFileDurably writes content to a temporary file in the target's directory, fsyncs
// it, renames it into place and fsyncs the directory: after it returns the file survives
// a crash under its final name, and before it returns only a temporary name can exist.
func (db *DB) writeFileDurably(target string, content io.Reader) error {
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, tmpPrefix+filepath.Base(target)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if _, err := io.Copy(f, content); err != nil {
		return fail(err)
	}
	if !db.opts.NoSync {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		os.Remove(tmp)
		return err
	}
	if db.opts.NoSync {
		return nil
	}
	// The rename, and any directory MkdirAll just made, must reach the disk too.
	for d, i := dir, 0; i < 3; d, i = filepath.Dir(d), i+1 {
		if err := fsync.Dir(d); err != nil {
			return err
		}
	}
	return nil
}

// removeFiles deletes files after their rows are gone (or never came); a failure is only
// logged, and the next Open's sweep retries.
func (db *DB) removeFiles(paths []string) {
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			db.log.Warn("removing a knowledge base file", "path", p, "error", err)
		}
	}
}

func (db *DB) removeKBFiles(workspaceID, kbID string) {
	if err := os.RemoveAll(db.kbDir(workspaceID, kbID)); err != nil {
		db.log.Warn("removing a knowledge base's files", "knowledge_base_id", kbID, "error", err)
	}
}

func (db *DB) removeWorkspaceFiles(workspaceID string) {
	if !data.ValidID(data.PrefixWorkspace, workspaceID) {
		return // never let a strange id reach RemoveAll
	}
	if err := os.RemoveAll(filepath.Join(db.dir, filesDir, workspaceID)); err != nil {
		db.log.Warn("removing a workspace's files", "workspace_id", workspaceID, "error", err)
	}
}

// openKnowledge prepares the knowledge bases at Open: a sweep of the files directory.
func (db *DB) openKnowledge() error {
	if err := db.probeFilesDir(); err != nil {
		return err
	}
	n, err := db.sweepFiles()
	if err != nil {
		return fmt.Errorf("sweeping knowledge base files: %w", err)
	}
	if n > 0 {
		db.log.Info("removed leftover knowledge base files", "count", n)
	}
	return nil
}

// probeFilesDir proves that files can be made where the server makes them: in the data
// directory (files/ itself, an online backup's spool) and in files/ when it exists. A
// directory whose database the process may write but not the directory itself (a chown
// of the database file alone) opened, and then failed every file upload with a 500.
func (db *DB) probeFilesDir() error {
	dirs := []string{db.dir}
	if files := filepath.Join(db.dir, filesDir); dirExists(files) {
		dirs = append(dirs, files)
	}
	for _, dir := range dirs {
		f, err := os.CreateTemp(dir, tmpPrefix+"probe-*")
		if err != nil {
			return fmt.Errorf("files cannot be stored in %s: %w", dir, err)
		}
		f.Close()
		if err := os.Remove(f.Name()); err != nil {
			return err
		}
	}
	return nil
}

func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// sweepFiles deletes what a crash can leave under the files directory: temporary files,
// files whose source row never committed (a crash between rename and commit) or was
// deleted (a crash between commit and removal), and directories of deleted knowledge bases
// and workspaces. It returns how many entries it removed.
func (db *DB) sweepFiles() (int, error) {
	root := filepath.Join(db.dir, filesDir)
	wsDirs, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	removed := 0
	remove := func(p string) error {
		removed++
		return os.RemoveAll(p)
	}
	err = db.view(func(tx *bbolt.Tx) error {
		for _, ws := range wsDirs {
			wsPath := filepath.Join(root, ws.Name())
			kbDirs, err := os.ReadDir(wsPath)
			if err != nil {
				if err := remove(wsPath); err != nil { // a stray file where a directory belongs
					return err
				}
				continue
			}
			for _, kb := range kbDirs {
				kbPath := filepath.Join(wsPath, kb.Name())
				if !kb.IsDir() || !inWorkspace(tx.Bucket(bucketKnowledgeBase), ws.Name(), kb.Name()) {
					if err := remove(kbPath); err != nil {
						return err
					}
					continue
				}
				files, err := os.ReadDir(kbPath)
				if err != nil {
					return err
				}
				for _, f := range files {
					name := f.Name()
					src, err := getSource(tx, kb.Name(), name)
					if err != nil {
						return err
					}
					if strings.HasPrefix(name, tmpPrefix) || src == nil || src.Type != data.SourceFiles {
						if err := remove(filepath.Join(kbPath, name)); err != nil {
							return err
						}
					}
				}
			}
		}
		return nil
	})
	return removed, err
}

// PutSourceFile implements service.SourceFiles: the file is complete, fsynced and under
// its final name when it returns; until its source row commits, the next Open's sweep
// would remove it.
func (db *DB) PutSourceFile(ctx context.Context, workspaceID, kbID, sourceID string, r io.Reader) error {
	if !data.ValidID(data.PrefixWorkspace, workspaceID) || !data.ValidID(data.PrefixKnowledgeBase, kbID) || !data.ValidID(data.PrefixSource, sourceID) {
		return fmt.Errorf("storing a source file: invalid id in %s/%s/%s", workspaceID, kbID, sourceID)
	}
	return db.writeFileDurably(db.sourceFilePath(workspaceID, kbID, sourceID), r)
}

// OpenSourceFile implements service.SourceFiles.
func (db *DB) OpenSourceFile(ctx context.Context, workspaceID, kbID, sourceID string) (io.ReadSeekCloser, error) {
	f, err := os.Open(db.sourceFilePath(workspaceID, kbID, sourceID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, data.NotFound("Source")
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// DiscardSourceFiles implements service.SourceFiles.
func (db *DB) DiscardSourceFiles(ctx context.Context, workspaceID, kbID string, sourceIDs []string) error {
	var errs []error
	for _, id := range sourceIDs {
		err := os.Remove(db.sourceFilePath(workspaceID, kbID, id))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
