package bolt

import (
	"bytes"
	"context"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.KnowledgeBaseService = (*DB)(nil)

// Buckets of knowledge bases besides bucketKnowledgeBase (declared in db.go, where agents
// check their knowledge_base_ids against it).
var (
	bucketKBByWS        = []byte("knowledge_bases_by_ws") // scope workspace
	bucketKBSources     = []byte("kb_sources")            // "<kb>\x00<source>" → source row
	bucketKBChunks      = []byte("kb_chunks")             // "<kb>\x00<source>\x00<%06d seq>" → chunk
	bucketKBPendingURLs = []byte("kb_pending_urls")       // "<kb>\x00<source>" → empty, until fetched
)

// DefaultMaxSourcesPerKnowledgeBase is KnowledgeOptions.MaxSources when unset.
const DefaultMaxSourcesPerKnowledgeBase = 1000

// KnowledgeOptions configures knowledge bases.
type KnowledgeOptions struct {
	// MaxSources bounds the sources (texts, urls and files together) of one knowledge
	// base; DefaultMaxSourcesPerKnowledgeBase when 0.
	MaxSources int
	// Embedder, when set, computes a vector per chunk at indexing time and per query, and
	// retrieval blends semantic and lexical scores. Nil means lexical retrieval only.
	Embedder knowledge.Embedder
}

// kbRow is a knowledge base as stored: its sources live in bucketKBSources, so a rename
// does not rewrite them and a source change does not rewrite the others.
type kbRow struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	WorkspaceID string    `json:"workspace_id"`
	CreatedAt   data.Time `json:"created_at"`
	UpdatedAt   data.Time `json:"updated_at"`
}

func (db *DB) maxSources() int {
	if n := db.opts.Knowledge.MaxSources; n > 0 {
		return n
	}
	return DefaultMaxSourcesPerKnowledgeBase
}

// loadKB reads a knowledge base of the caller's workspace; anything else is not found.
func loadKB(ctx context.Context, tx *bbolt.Tx, id string) (*kbRow, error) {
	p := data.PrincipalFrom(ctx)
	var row kbRow
	if !data.ValidID(data.PrefixKnowledgeBase, id) {
		return nil, data.NotFound("Knowledge base")
	}
	found, err := getJSON(tx.Bucket(bucketKnowledgeBase), []byte(id), &row)
	if err != nil {
		return nil, err
	}
	if !found || p == nil || row.WorkspaceID != p.WorkspaceID {
		return nil, data.NotFound("Knowledge base")
	}
	return &row, nil
}

// loadKBForChange loads a knowledge base about to change and its record as the caller
// last saw it, refusing a stale If-Match.
func loadKBForChange(ctx context.Context, tx *bbolt.Tx, id string) (*kbRow, *data.KnowledgeBase, error) {
	row, err := loadKB(ctx, tx, id)
	if err != nil {
		return nil, nil, err
	}
	current, err := kbRecord(tx, row)
	if err != nil {
		return nil, nil, err
	}
	if err := data.CheckIfMatch(data.IfMatch(ctx), current); err != nil {
		return nil, nil, err
	}
	return row, current, nil
}

// kbRecord assembles the record of row from its sources, oldest first in each list.
func kbRecord(tx *bbolt.Tx, row *kbRow) (*data.KnowledgeBase, error) {
	kb := &data.KnowledgeBase{
		ID: row.ID, Name: row.Name, WorkspaceID: row.WorkspaceID, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
		Texts: []data.TextSource{}, URLs: []data.URLSource{}, Files: []data.FileSource{},
	}
	prefix := indexKey(row.ID, "")
	c := tx.Bucket(bucketKBSources).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var s sourceRow
		if err := jsonUnmarshal(v, &s); err != nil {
			return nil, err
		}
		s.appendTo(kb)
	}
	return kb, nil
}

// ListKnowledgeBases implements data.KnowledgeBaseService.
func (db *DB) ListKnowledgeBases(ctx context.Context, req data.PageRequest) ([]*data.KnowledgeBase, data.Page, error) {
	p := data.PrincipalFrom(ctx)
	var list []*data.KnowledgeBase
	var page data.Page
	err := db.view(func(tx *bbolt.Tx) error {
		ids, pg, err := db.page(tx, bucketKBByWS, p.WorkspaceID, req)
		if err != nil {
			return err
		}
		page = pg
		list = make([]*data.KnowledgeBase, 0, len(ids))
		for _, id := range ids {
			row, err := loadKB(ctx, tx, id)
			if err != nil {
				return err
			}
			kb, err := kbRecord(tx, row)
			if err != nil {
				return err
			}
			list = append(list, kb)
		}
		return nil
	})
	return list, page, err
}

// CreateKnowledgeBase implements data.KnowledgeBaseService. Texts are chunked before the
// transaction; urls are left pending for the fetcher.
func (db *DB) CreateKnowledgeBase(ctx context.Context, in data.KnowledgeBaseCreate) (*data.KnowledgeBase, error) {
	if err := validate.KnowledgeBaseCreate(in, nil); err != nil {
		return nil, err
	}
	if n := len(in.Texts) + len(in.URLs); n > db.maxSources() {
		return nil, tooManySources(sourcesField(data.SourcesAdd{Texts: in.Texts, URLs: in.URLs}), db.maxSources(), 0, n)
	}
	p := data.PrincipalFrom(ctx)
	kbID := db.ids.New(data.PrefixKnowledgeBase)
	prepared := db.prepareSources(ctx, p.WorkspaceID, kbID, data.SourcesAdd{Texts: in.Texts, URLs: in.URLs}, nil)
	var out *data.KnowledgeBase
	err := db.update(func(tx *bbolt.Tx) error {
		if err := db.checkQuota(tx, p.WorkspaceID, quotaKnowledgeBases); err != nil {
			return err
		}
		now := db.timeNow()
		row := &kbRow{ID: kbID, Name: in.Name, WorkspaceID: p.WorkspaceID, CreatedAt: now, UpdatedAt: now}
		if err := putJSON(tx.Bucket(bucketKnowledgeBase), []byte(row.ID), row); err != nil {
			return err
		}
		if err := indexPut(tx.Bucket(bucketKBByWS), p.WorkspaceID, row.ID); err != nil {
			return err
		}
		if err := db.storeSources(ctx, tx, row, prepared); err != nil {
			return err
		}
		kb, err := kbRecord(tx, row)
		if err != nil {
			return err
		}
		out = kb
		_, err = db.recordEvent(ctx, tx, data.EventKnowledgeBaseCreated, p.WorkspaceID, kb)
		return err
	})
	return out, err
}

// KnowledgeBase implements data.KnowledgeBaseService.
func (db *DB) KnowledgeBase(ctx context.Context, id string) (*data.KnowledgeBase, error) {
	var out *data.KnowledgeBase
	err := db.view(func(tx *bbolt.Tx) error {
		row, err := loadKB(ctx, tx, id)
		if err != nil {
			return err
		}
		out, err = kbRecord(tx, row)
		return err
	})
	return out, err
}

// UpdateKnowledgeBase implements data.KnowledgeBaseService.
func (db *DB) UpdateKnowledgeBase(ctx context.Context, id string, in data.KnowledgeBaseUpdate) (*data.KnowledgeBase, error) {
	if err := validate.KnowledgeBaseUpdate(in); err != nil {
		return nil, err
	}
	var out *data.KnowledgeBase
	err := db.update(func(tx *bbolt.Tx) error {
		row, current, err := loadKBForChange(ctx, tx, id)
		if err != nil {
			return err
		}
		if !in.Name.Set || in.Name.V == row.Name {
			out = current // nothing changed: no write, no event
			return nil
		}
		row.Name, row.UpdatedAt = in.Name.V, db.timeNow()
		if err := putJSON(tx.Bucket(bucketKnowledgeBase), []byte(row.ID), row); err != nil {
			return err
		}
		out = current
		out.Name, out.UpdatedAt = row.Name, row.UpdatedAt
		_, err = db.recordEvent(ctx, tx, data.EventKnowledgeBaseUpdated, row.WorkspaceID, out)
		return err
	})
	return out, err
}

// DeleteKnowledgeBase implements data.KnowledgeBaseService.
func (db *DB) DeleteKnowledgeBase(ctx context.Context, id string) error {
	return db.update(func(tx *bbolt.Tx) error {
		row, kb, err := loadKBForChange(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := db.deleteKBTx(tx, row); err != nil {
			return err
		}
		_, err = db.recordEvent(ctx, tx, data.EventKnowledgeBaseDeleted, row.WorkspaceID, kb)
		return err
	})
}

// deleteKBTx removes a knowledge base with its sources, chunks and pending fetches, and
// runs the knowledge base delete hooks (agents' knowledge_base_ids). Its files and cached
// index go once the transaction commits: a rollback must find them still there.
func (db *DB) deleteKBTx(tx *bbolt.Tx, row *kbRow) error {
	for _, b := range [][]byte{bucketKBSources, bucketKBChunks, bucketKBPendingURLs} {
		if err := deletePrefix(tx.Bucket(b), indexKey(row.ID, "")); err != nil {
			return err
		}
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
	tx.OnCommit(func() {
		db.kbIndexes.drop(kb)
		db.removeKBFiles(ws, kb)
	})
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
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
