package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// kbCols are the columns of a knowledge base's own fields, in scanKB's order.
const kbCols = `id, name, workspace_id, created_at, updated_at, embedding_error`

func scanKB(row pgx.Row) (*data.KnowledgeBase, error) {
	var kb data.KnowledgeBase
	var created, updated time.Time
	if err := row.Scan(&kb.ID, &kb.Name, &kb.WorkspaceID, &created, &updated, &kb.EmbeddingError); err != nil {
		return nil, err
	}
	kb.CreatedAt, kb.UpdatedAt = data.NewTime(created), data.NewTime(updated)
	return &kb, nil
}

// KnowledgeBase implements service.KnowledgeTx.
func (t *tx) KnowledgeBase(id string) (*data.KnowledgeBase, error) {
	kb, err := scanKB(t.queryRow(`SELECT `+kbCols+` FROM knowledge_bases WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return kb, nil
}

// KnowledgeBaseSources implements service.KnowledgeTx.
func (t *tx) KnowledgeBaseSources(kb *data.KnowledgeBase) error {
	return t.fillSources([]*data.KnowledgeBase{kb})
}

// fillSources sets the source lists of kbs (of distinct ids) from their stored sources,
// in one query: each list oldest first (by source id, as ids are time-ordered).
func (t *tx) fillSources(kbs []*data.KnowledgeBase) error {
	byID := make(map[string]*data.KnowledgeBase, len(kbs))
	ids := make([]string, 0, len(kbs))
	for _, kb := range kbs {
		kb.Texts, kb.URLs, kb.Files = []data.TextSource{}, []data.URLSource{}, []data.FileSource{}
		byID[kb.ID] = kb
		ids = append(ids, kb.ID)
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := t.query(`SELECT `+sourceCols+` FROM knowledge_sources WHERE knowledge_base_id = ANY($1) ORDER BY knowledge_base_id, id`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanSource(rows)
		if err != nil {
			return err
		}
		s.AppendTo(byID[s.KnowledgeBaseID])
	}
	return rows.Err()
}

// KnowledgeBasePage implements service.KnowledgeTx.
func (t *tx) KnowledgeBasePage(workspaceID string, req data.PageRequest) ([]*data.KnowledgeBase, data.Page, error) {
	list, page, err := pageRows(t, inWorkspace("knowledge_bases", kbCols, workspaceID), req, func(rows pgx.Rows) (*data.KnowledgeBase, string, error) {
		kb, err := scanKB(rows)
		if err != nil {
			return nil, "", err
		}
		return kb, kb.ID, nil
	})
	if err != nil {
		return nil, page, err
	}
	if list == nil {
		list = []*data.KnowledgeBase{}
	}
	return list, page, t.fillSources(list)
}

// InsertKnowledgeBase implements service.KnowledgeTx.
func (t *tx) InsertKnowledgeBase(kb *data.KnowledgeBase) error {
	_, err := t.exec(`INSERT INTO knowledge_bases (`+kbCols+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		kb.ID, kb.Name, kb.WorkspaceID, kb.CreatedAt.Time, kb.UpdatedAt.Time, kb.EmbeddingError)
	return err
}

// PutKnowledgeBase implements service.KnowledgeTx: its own fields; the workspace and
// creation time stay as stored (a knowledge base does not move).
func (t *tx) PutKnowledgeBase(kb *data.KnowledgeBase) error {
	_, err := t.exec(`UPDATE knowledge_bases SET name = $2, updated_at = $3, embedding_error = $4 WHERE id = $1`,
		kb.ID, kb.Name, kb.UpdatedAt.Time, kb.EmbeddingError)
	return err
}

// DeleteKnowledgeBase implements service.KnowledgeTx: the row, its sources (by the
// foreign key), chunks and files go in the transaction, then the knowledge base delete
// hooks run (agents drop the id from their knowledge_base_ids).
func (t *tx) DeleteKnowledgeBase(kb *data.KnowledgeBase) error {
	return t.deleteKB(kb.WorkspaceID, kb.ID)
}

func (t *tx) deleteKB(workspaceID, kbID string) error {
	for _, sql := range []string{
		`DELETE FROM knowledge_sources WHERE knowledge_base_id = $1`,
		`DELETE FROM knowledge_chunks WHERE knowledge_base_id = $1`,
		`DELETE FROM source_files WHERE knowledge_base_id = $1`,
		`DELETE FROM knowledge_bases WHERE id = $1`,
	} {
		if _, err := t.exec(sql, kbID); err != nil {
			return err
		}
	}
	for _, hook := range knowledgeBaseDeleteHooks {
		if err := hook(t, workspaceID, kbID); err != nil {
			return err
		}
	}
	return nil
}

// deleteWorkspaceKnowledgeBases is the workspace cascade of knowledge bases, with their
// sources, chunks and files, and the knowledge base delete hooks of each.
func deleteWorkspaceKnowledgeBases(t *tx, workspaceID string) error {
	for _, sql := range []string{
		`DELETE FROM knowledge_chunks WHERE workspace_id = $1 OR knowledge_base_id IN (SELECT id FROM knowledge_bases WHERE workspace_id = $1)`,
		`DELETE FROM knowledge_sources WHERE workspace_id = $1`,
		`DELETE FROM source_files WHERE workspace_id = $1`,
	} {
		if _, err := t.exec(sql, workspaceID); err != nil {
			return err
		}
	}
	rows, err := t.query(`DELETE FROM knowledge_bases WHERE workspace_id = $1 RETURNING id`, workspaceID)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, id := range ids {
		for _, hook := range knowledgeBaseDeleteHooks {
			if err := hook(t, workspaceID, id); err != nil {
				return err
			}
		}
	}
	return nil
}

func init() {
	workspaceCascades = append(workspaceCascades, deleteWorkspaceKnowledgeBases)
	quotaCounters[data.LimitKnowledgeBases] = func(t *tx, workspaceID string, upTo int64) (int64, error) {
		return countUpTo(t, "knowledge_bases", workspaceID, upTo)
	}
}
