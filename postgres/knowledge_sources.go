package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// sourceCols are the columns of a source, in scanSource's order.
const sourceCols = `id, type, knowledge_base_id, workspace_id, title, content, url, attempt, filename, content_type, size_bytes, sha256, status, error, created_at, indexed_at, embedding_space`

func scanSource(row pgx.Row) (*data.KnowledgeSource, error) {
	var s data.KnowledgeSource
	var created time.Time
	var indexed *time.Time
	err := row.Scan(&s.ID, &s.Type, &s.KnowledgeBaseID, &s.WorkspaceID, &s.Title, &s.Content, &s.URL, &s.Attempt,
		&s.Filename, &s.ContentType, &s.SizeBytes, &s.SHA256, &s.Status, &s.Error, &created, &indexed, &s.EmbeddingSpace)
	if err != nil {
		return nil, err
	}
	s.CreatedAt, s.IndexedAt = data.NewTime(created), timePtr(indexed)
	return &s, nil
}

// KnowledgeSource implements service.KnowledgeTx.
func (t *tx) KnowledgeSource(kbID, sourceID string) (*data.KnowledgeSource, error) {
	s, err := scanSource(t.queryRow(`SELECT `+sourceCols+` FROM knowledge_sources WHERE knowledge_base_id = $1 AND id = $2`, kbID, sourceID))
	if err != nil {
		return nil, noRows(err)
	}
	return s, nil
}

// CountKnowledgeSources implements service.KnowledgeTx.
func (t *tx) CountKnowledgeSources(kbID string) (int, error) {
	var n int
	err := t.queryRow(`SELECT count(*) FROM knowledge_sources WHERE knowledge_base_id = $1`, kbID).Scan(&n)
	return n, err
}

// PutKnowledgeSource implements service.KnowledgeTx. The pending-url list is the partial
// index of url rows whose status is pending, kept by PostgreSQL.
func (t *tx) PutKnowledgeSource(s *data.KnowledgeSource) error {
	_, err := t.exec(`INSERT INTO knowledge_sources (`+sourceCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
		ON CONFLICT (knowledge_base_id, id) DO UPDATE SET type = excluded.type, workspace_id = excluded.workspace_id,
			title = excluded.title, content = excluded.content, url = excluded.url, attempt = excluded.attempt,
			filename = excluded.filename, content_type = excluded.content_type, size_bytes = excluded.size_bytes,
			sha256 = excluded.sha256, status = excluded.status, error = excluded.error,
			created_at = excluded.created_at, indexed_at = excluded.indexed_at, embedding_space = excluded.embedding_space`,
		s.ID, s.Type, s.KnowledgeBaseID, s.WorkspaceID, s.Title, s.Content, s.URL, s.Attempt, s.Filename, s.ContentType,
		s.SizeBytes, s.SHA256, s.Status, s.Error, s.CreatedAt.Time, sqlTime(s.IndexedAt), s.EmbeddingSpace)
	return err
}

// DeleteKnowledgeSource implements service.KnowledgeTx: the row, its chunks and its file,
// all in the transaction (a rollback keeps the file).
func (t *tx) DeleteKnowledgeSource(s *data.KnowledgeSource) error {
	for _, sql := range []string{
		`DELETE FROM knowledge_sources WHERE knowledge_base_id = $1 AND id = $2`,
		`DELETE FROM source_files WHERE knowledge_base_id = $1 AND source_id = $2`,
	} {
		if _, err := t.exec(sql, s.KnowledgeBaseID, s.ID); err != nil {
			return err
		}
	}
	return t.PutSourceChunks(s.KnowledgeBaseID, s.ID, nil)
}

// KnowledgeSources implements service.KnowledgeTx.
func (t *tx) KnowledgeSources(kbID string) ([]*data.KnowledgeSource, error) {
	rows, err := t.query(`SELECT `+sourceCols+` FROM knowledge_sources WHERE knowledge_base_id = $1 ORDER BY id`, kbID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*data.KnowledgeSource, error) { return scanSource(row) })
}

// SourceChunks implements service.KnowledgeTx.
func (t *tx) SourceChunks(kbID, sourceID string) ([]data.SourceChunk, error) {
	rows, err := t.query(`SELECT text, vector FROM knowledge_chunks WHERE knowledge_base_id = $1 AND source_id = $2 ORDER BY position`, kbID, sourceID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (data.SourceChunk, error) {
		var c data.SourceChunk
		err := row.Scan(&c.Text, &c.Vector)
		return c, err
	})
}

// PendingURLSources implements service.KnowledgeTx.
func (t *tx) PendingURLSources() ([]*data.KnowledgeSource, error) {
	rows, err := t.query(`SELECT ` + sourceCols + ` FROM knowledge_sources WHERE type = 'urls' AND status = 'pending' ORDER BY knowledge_base_id, id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*data.KnowledgeSource, error) { return scanSource(row) })
}

// PutSourceChunks implements service.KnowledgeTx: the old chunks go, the new ones come in
// by COPY, and the knowledge base's chunks_revision moves on.
func (t *tx) PutSourceChunks(kbID, sourceID string, chunks []data.SourceChunk) error {
	tag, err := t.exec(`DELETE FROM knowledge_chunks WHERE knowledge_base_id = $1 AND source_id = $2`, kbID, sourceID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 && len(chunks) == 0 {
		return nil
	}
	if len(chunks) > 0 {
		var ws string
		if err := noRows(t.queryRow(`SELECT workspace_id FROM knowledge_bases WHERE id = $1`, kbID).Scan(&ws)); err != nil {
			return err
		}
		_, err := t.copyFrom(pgx.Identifier{"knowledge_chunks"}, []string{"knowledge_base_id", "source_id", "workspace_id", "position", "text", "vector"},
			pgx.CopyFromSlice(len(chunks), func(i int) ([]any, error) {
				var vec any
				if len(chunks[i].Vector) > 0 {
					vec = chunks[i].Vector
				}
				return []any{kbID, sourceID, ws, int32(i), chunks[i].Text, vec}, nil
			}))
		if err != nil {
			return err
		}
	}
	_, err = t.exec(`UPDATE knowledge_bases SET chunks_revision = chunks_revision + 1 WHERE id = $1`, kbID)
	return err
}

// EachSourceChunks implements service.KnowledgeTx: one ordered query over the knowledge
// base's chunks, streamed; fn is called while the rows are read, so it must not use the
// transaction.
func (t *tx) EachSourceChunks(kbID string, fn func(sourceID string, chunks []data.SourceChunk) error) error {
	rows, err := t.query(`SELECT source_id, text, vector FROM knowledge_chunks WHERE knowledge_base_id = $1 ORDER BY source_id, position`, kbID)
	if err != nil {
		return err
	}
	defer rows.Close()
	var source string
	var chunks []data.SourceChunk
	for rows.Next() {
		var src string
		var c data.SourceChunk
		if err := rows.Scan(&src, &c.Text, &c.Vector); err != nil {
			return err
		}
		if src != source && len(chunks) > 0 {
			if err := fn(source, chunks); err != nil {
				return err
			}
			chunks = chunks[:0]
		}
		source = src
		chunks = append(chunks, c)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(chunks) > 0 {
		return fn(source, chunks)
	}
	return nil
}

// ChunksRevision implements service.KnowledgeTx.
func (t *tx) ChunksRevision(kbID string) (uint64, error) {
	var rev int64
	err := t.queryRow(`SELECT chunks_revision FROM knowledge_bases WHERE id = $1`, kbID).Scan(&rev)
	return uint64(rev), noRows(err)
}
