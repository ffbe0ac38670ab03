package bolt

import (
	"bytes"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Buckets of knowledge bases besides bucketKnowledgeBase (declared in db.go, where agents
// check their knowledge_base_ids against it).
var (
	bucketKBByWS        = []byte("knowledge_bases_by_ws") // scope workspace
	bucketKBSources     = []byte("kb_sources")            // "<kb>\x00<source>" → source row
	bucketKBChunks      = []byte("kb_chunks")             // "<kb>\x00<source>\x00<%06d seq>" → chunk
	bucketKBPendingURLs = []byte("kb_pending_urls")       // "<kb>\x00<source>" → empty, until fetched
)

// KnowledgeOptions configures knowledge bases; the services apply them (Options.Knowledge
// is handed over by the wiring).
type KnowledgeOptions = service.KnowledgeOptions

// kbRow is a knowledge base as stored: its sources live in bucketKBSources, so a rename
// does not rewrite them and a source change does not rewrite the others.
type kbRow struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	WorkspaceID    string    `json:"workspace_id"`
	CreatedAt      data.Time `json:"created_at"`
	UpdatedAt      data.Time `json:"updated_at"`
	EmbeddingError *string   `json:"embedding_error,omitempty"`
}

func rowOf(kb *data.KnowledgeBase) *kbRow {
	return &kbRow{ID: kb.ID, Name: kb.Name, WorkspaceID: kb.WorkspaceID, CreatedAt: kb.CreatedAt, UpdatedAt: kb.UpdatedAt,
		EmbeddingError: kb.EmbeddingError}
}

func (row *kbRow) record() *data.KnowledgeBase {
	return &data.KnowledgeBase{ID: row.ID, Name: row.Name, WorkspaceID: row.WorkspaceID, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
		EmbeddingError: row.EmbeddingError}
}

// fillSources sets kb's source lists from its stored sources, oldest first in each list.
func fillSources(tx *bbolt.Tx, kb *data.KnowledgeBase) error {
	kb.Texts, kb.URLs, kb.Files = []data.TextSource{}, []data.URLSource{}, []data.FileSource{}
	prefix := indexKey(kb.ID, "")
	c := tx.Bucket(bucketKBSources).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var s data.KnowledgeSource
		if err := jsonUnmarshal(v, &s); err != nil {
			return err
		}
		s.AppendTo(kb)
	}
	return nil
}

// kbRecord assembles the record of row with its sources.
func kbRecord(tx *bbolt.Tx, row *kbRow) (*data.KnowledgeBase, error) {
	kb := row.record()
	return kb, fillSources(tx, kb)
}

// KnowledgeBase implements service.KnowledgeTx.
func (t tx) KnowledgeBase(id string) (*data.KnowledgeBase, error) {
	var row kbRow
	found, err := getJSON(t.b.Bucket(bucketKnowledgeBase), []byte(id), &row)
	if err != nil || !found {
		return nil, err
	}
	return row.record(), nil
}

// KnowledgeBaseSources implements service.KnowledgeTx.
func (t tx) KnowledgeBaseSources(kb *data.KnowledgeBase) error { return fillSources(t.b, kb) }

// KnowledgeBasePage implements service.KnowledgeTx.
func (t tx) KnowledgeBasePage(workspaceID string, req data.PageRequest) ([]*data.KnowledgeBase, data.Page, error) {
	ids, page, err := t.db.page(t.b, bucketKBByWS, workspaceID, req)
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.KnowledgeBase, 0, len(ids))
	for _, id := range ids {
		var row kbRow
		found, err := getJSON(t.b.Bucket(bucketKnowledgeBase), []byte(id), &row)
		if err != nil {
			return nil, page, err
		}
		if !found {
			continue // the index is written with the row: only damage could get here
		}
		kb, err := kbRecord(t.b, &row)
		if err != nil {
			return nil, page, err
		}
		list = append(list, kb)
	}
	return list, page, nil
}

// InsertKnowledgeBase implements service.KnowledgeTx.
func (t tx) InsertKnowledgeBase(kb *data.KnowledgeBase) error {
	if err := putJSON(t.b.Bucket(bucketKnowledgeBase), []byte(kb.ID), rowOf(kb)); err != nil {
		return err
	}
	return indexPut(t.b.Bucket(bucketKBByWS), kb.WorkspaceID, kb.ID)
}

// PutKnowledgeBase implements service.KnowledgeTx.
func (t tx) PutKnowledgeBase(kb *data.KnowledgeBase) error {
	return putJSON(t.b.Bucket(bucketKnowledgeBase), []byte(kb.ID), rowOf(kb))
}

// DeleteKnowledgeBase implements service.KnowledgeTx.
func (t tx) DeleteKnowledgeBase(kb *data.KnowledgeBase) error {
	return t.db.deleteKBTx(t.b, rowOf(kb))
}

// deleteKBTx removes a knowledge base with its sources, chunks and pending fetches, and
// runs the knowledge base delete hooks (agents' knowledge_base_ids). Its files go once the
// transaction commits: a rollback must find them still there.
func (db *DB) deleteKBTx(tx *bbolt.Tx, row *kbRow) error {
	for _, b := range [][]byte{bucketKBSources, bucketKBChunks, bucketKBPendingURLs} {
		if err := deletePrefix(tx.Bucket(b), indexKey(row.ID, "")); err != nil {
			return err
		}
	}
	if err := tx.Bucket(bucketKBChunks).Delete(chunksRevisionKey(row.ID)); err != nil {
		return err
	}
	if err := indexDelete(tx.Bucket(bucketKBByWS), row.WorkspaceID, row.ID); err != nil {
		return err
	}
	if err := tx.Bucket(bucketKnowledgeBase).Delete([]byte(row.ID)); err != nil {
		return err
	}
	for _, hook := range knowledgeBaseDeleteHooks {
		if err := hook(db, tx, row.WorkspaceID, row.ID); err != nil {
			return err
		}
	}
	ws, kb := row.WorkspaceID, row.ID
	tx.OnCommit(func() { db.removeKBFiles(ws, kb) })
	return nil
}

// deleteWorkspaceKnowledgeBases is the knowledge bases' part of deleting a workspace.
func deleteWorkspaceKnowledgeBases(db *DB, tx *bbolt.Tx, workspaceID string) error {
	for _, id := range scopeIDs(tx.Bucket(bucketKBByWS), workspaceID) {
		var row kbRow
		found, err := getJSON(tx.Bucket(bucketKnowledgeBase), []byte(id), &row)
		if err != nil {
			return err
		}
		if found {
			if err := db.deleteKBTx(tx, &row); err != nil {
				return err
			}
		}
	}
	tx.OnCommit(func() { db.removeWorkspaceFiles(workspaceID) })
	return nil
}

// deletePrefix deletes every key of b that starts with prefix. Keys are collected first:
// deleting under a live cursor can skip the key after each deleted one.
func deletePrefix(b *bbolt.Bucket, prefix []byte) error {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	return deleteKeys(b, keys)
}

// deleteKeys deletes keys (collected beforehand, not under a live cursor) from b.
func deleteKeys(b *bbolt.Bucket, keys [][]byte) error {
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
