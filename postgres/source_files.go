package postgres

// The original files of knowledge base sources live in the source_files table, so every
// replica serves them and they go into the database's backups with their rows. A file is
// stored (committed) before the transaction that stores its source row; deleting a
// source, a knowledge base or a workspace deletes its files in that same transaction, so
// a rollback keeps them. What a crash between the two steps leaves is swept at start.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// orphanFileGrace is how old a file without a source row must be before a start sweeps
// it: another replica may be between storing a file and committing its row right now.
const orphanFileGrace = time.Hour

// PutSourceFile implements service.SourceFiles: the file is committed when it returns,
// and no reader sees a partial one (the row appears whole at the commit).
func (db *DB) PutSourceFile(ctx context.Context, workspaceID, kbID, sourceID string, r io.Reader) error {
	if !data.ValidID(data.PrefixWorkspace, workspaceID) || !data.ValidID(data.PrefixKnowledgeBase, kbID) || !data.ValidID(data.PrefixSource, sourceID) {
		return fmt.Errorf("storing a source file: invalid id in %s/%s/%s", workspaceID, kbID, sourceID)
	}
	if err := db.fence.failed(); err != nil {
		return err // before reading the file
	}
	content, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	return db.writeOnce(ctx, func(t *tx) error {
		_, err := t.exec(`INSERT INTO source_files (workspace_id, knowledge_base_id, source_id, content) VALUES ($1, $2, $3, $4)
		ON CONFLICT (knowledge_base_id, source_id) DO UPDATE SET workspace_id = excluded.workspace_id, content = excluded.content, stored_at = now()`,
			workspaceID, kbID, sourceID, content)
		return err
	})
}

// OpenSourceFile implements service.SourceFiles. The file is read whole (files are
// bounded by the upload limit): a download then sees one version even if the source is
// deleted while it is sent, as an open file on disk would.
func (db *DB) OpenSourceFile(ctx context.Context, workspaceID, kbID, sourceID string) (io.ReadSeekCloser, error) {
	var content []byte
	err := db.pool.QueryRow(ctx, `SELECT content FROM source_files WHERE workspace_id = $1 AND knowledge_base_id = $2 AND source_id = $3`,
		workspaceID, kbID, sourceID).Scan(&content)
	if err := noRows(err); err != nil {
		return nil, unavailableError(err)
	}
	if err != nil {
		return nil, data.NotFound("Source")
	}
	return readSeekNopCloser{bytes.NewReader(content)}, nil
}

type readSeekNopCloser struct{ *bytes.Reader }

func (readSeekNopCloser) Close() error { return nil }

// DiscardSourceFiles implements service.SourceFiles.
func (db *DB) DiscardSourceFiles(ctx context.Context, workspaceID, kbID string, sourceIDs []string) error {
	if len(sourceIDs) == 0 {
		return nil
	}
	return db.writeOnce(ctx, func(t *tx) error {
		_, err := t.exec(`DELETE FROM source_files WHERE workspace_id = $1 AND knowledge_base_id = $2 AND source_id = ANY($3)`,
			workspaceID, kbID, sourceIDs)
		return err
	})
}

// sweepOrphanFiles removes, at start (startRows), the files whose file source row is
// absent (a crash between storing the file and committing the row) once older than
// orphanFileGrace, and returns how many. It runs behind the fence: which files a source
// holds is a newer binary's to say once it has migrated, and an older rule could delete
// what it keeps.
func sweepOrphanFiles(t *tx) (int64, error) {
	tag, err := t.exec(`DELETE FROM source_files f WHERE f.stored_at < now() - $1 * interval '1 second'
		AND NOT EXISTS (SELECT 1 FROM knowledge_sources s
			WHERE s.knowledge_base_id = f.knowledge_base_id AND s.id = f.source_id AND s.type = 'files')`,
		int64(orphanFileGrace/time.Second))
	if err != nil {
		return 0, fmt.Errorf("postgres: sweeping knowledge base files: %w", err)
	}
	return tag.RowsAffected(), nil
}
