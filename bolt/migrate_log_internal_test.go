package bolt

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// TestOpenLogsTheMigration: docs/upgrading.md has the operator watch the log when the new
// binary first starts; the open that migrates an older file says so once, with both
// versions, and later opens say nothing. A file newer than the binary is refused with the
// way back as well as forward.
func TestOpenLogsTheMigration(t *testing.T) {
	db, dir, opts := openFile(t)
	db.Close()
	setVersion := func(v uint64) {
		raw, err := bbolt.Open(filepath.Join(dir, FileName), 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if err := raw.Update(func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketMeta).Put([]byte("schema_version"), binary.BigEndian.AppendUint64(nil, v))
		}); err != nil {
			t.Fatal(err)
		}
	}
	open := func() (string, error) {
		var logs bytes.Buffer
		o := opts
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		db, err := Open(dir, o)
		if err == nil {
			db.Close()
		}
		return logs.String(), err
	}
	setVersion(schemaVersion - 1)
	logs, err := open()
	want := "msg=\"migrated the database to this voiceapi's schema\" from_schema_version=" + strconv.Itoa(schemaVersion-1) + " schema_version=" + strconv.Itoa(schemaVersion)
	if err != nil || !strings.Contains(logs, want) {
		t.Fatalf("the migrating open: %v, logs %q, want %q", err, logs, want)
	}
	if logs, err := open(); err != nil || strings.Contains(logs, "migrated") {
		t.Fatalf("an open with nothing to migrate: %v, logs %q", err, logs)
	}
	setVersion(schemaVersion + 1)
	if _, err := open(); err == nil || !strings.HasSuffix(err.Error(), "upgrade voiceapi, or to roll back restore a backup taken before the upgrade (docs/upgrading.md, Rollback)") {
		t.Fatalf("a newer file: %v", err)
	}
}
