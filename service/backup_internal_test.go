package service

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestBackupWithoutSnapshotsSaysWhatToUse: on PostgreSQL, whose store takes no snapshots,
// GET /api/v1/admin/backup stays 404 but says why and what to use: it said only "Backups
// are not available on this server.", which an operator following docs/backup.md met on
// a scaled-out install with no next step.
func TestBackupWithoutSnapshotsSaysWhatToUse(t *testing.T) {
	_, err := (&BackupService{}).Backup(context.Background(), data.BackupOptions{})
	var e *data.Error
	if !errors.As(err, &e) || e.Code != data.ENOTFOUND || !strings.Contains(e.Message, "PostgreSQL") || !strings.Contains(e.Message, "pg_dump") {
		t.Fatalf("backup without snapshots: %v", err)
	}
}
