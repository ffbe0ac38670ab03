package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
)

// BackupService implements data.BackupService: the storage takes the snapshot, the
// service records who took it (backup.downloaded, conventions §11) before a byte of it is
// handed out, so no archive leaves without its event.
type BackupService struct {
	*base
	// snapshots is the storage's own backup (bolt's online snapshot of the database and
	// its files); nil when the store cannot take one.
	snapshots data.BackupService
}

var _ data.BackupService = (*BackupService)(nil)

// backupEvent is the data of a backup.downloaded event: what the archive holds, never
// any of its content.
type backupEvent struct {
	Archive string `json:"archive"`
	// FilesIncluded is always true today: every backup carries the stored files.
	FilesIncluded     bool `json:"files_included"`
	SecretKeyIncluded bool `json:"secret_key_included"`
}

// Available reports whether the store can take backups.
func (s *BackupService) Available() bool { return s.snapshots != nil }

// Backup implements data.BackupService. The event goes to the workspace the caller acts
// in (an instance admin's current workspace); a caller without one (the CLI) records
// nothing, as there is no workspace whose audit log could hold it.
func (s *BackupService) Backup(ctx context.Context, opts data.BackupOptions) (data.BackupArchive, error) {
	if s.snapshots == nil {
		return nil, data.Errorf(data.ENOTFOUND, "This server keeps its records in PostgreSQL, which this route cannot copy: back them up with pg_dump or continuous archiving for point-in-time recovery, and keep the secret key with them (docs/scale-out.md, Backups).")
	}
	archive, err := s.snapshots.Backup(ctx, opts)
	if err != nil {
		return nil, err
	}
	p := data.PrincipalFrom(ctx)
	if p == nil || p.WorkspaceID == "" {
		return archive, nil
	}
	ev := backupEvent{Archive: archive.Name(), FilesIncluded: true, SecretKeyIncluded: !opts.ExcludeSecretKey}
	err = s.store.Update(ctx, func(tx Tx) error {
		_, err := s.record(ctx, tx, data.EventBackupDownloaded, p.WorkspaceID, ev)
		return err
	})
	if err != nil {
		archive.Close()
		return nil, err
	}
	return archive, nil
}

// newBackupService takes the snapshots from store when it can take them (bolt can; a
// store that cannot leaves the route answering not found).
func newBackupService(b *base, store Store) *BackupService {
	snapshots, _ := store.(data.BackupService)
	return &BackupService{base: b, snapshots: snapshots}
}
