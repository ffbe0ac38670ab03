package data

import (
	"context"
	"io"
)

// BackupOptions choose what a backup holds.
type BackupOptions struct {
	// ExcludeSecretKey leaves the secret key file out. Without the key, the credentials
	// stored in the database cannot be decrypted after a restore, so the operator must
	// keep the key elsewhere (or set VOICEAPI_SECRET_KEY).
	ExcludeSecretKey bool
}

// BackupArchive is a consistent snapshot of an instance, ready to be streamed as a
// tar.gz archive. Close releases it, whether or not it was written.
type BackupArchive interface {
	io.WriterTo
	io.Closer
	// Name is a file name for the archive, e.g. voiceapi-backup-20261121T100405Z.tar.gz.
	Name() string
}

// BackupService takes backups of a running instance.
type BackupService interface {
	// Backup snapshots the database and the stored files; the caller streams the
	// archive with WriteTo, then closes it.
	Backup(ctx context.Context, opts BackupOptions) (BackupArchive, error)
}
