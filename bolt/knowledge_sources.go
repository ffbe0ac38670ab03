package bolt

import (
	"bytes"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

func sourceKey(kbID, sourceID string) []byte { return indexKey(kbID, sourceID) }

// getSource reads a source row, nil when absent.
func getSource(tx *bbolt.Tx, kbID, sourceID string) (*data.KnowledgeSource, error) {
	var s data.KnowledgeSource
	found, err := getJSON(tx.Bucket(bucketKBSources), sourceKey(kbID, sourceID), &s)
	if err != nil || !found {
		return nil, err
	}
	return &s, nil
}

// putSource stores a source row and keeps the pending-url index in step with its status.
func putSource(tx *bbolt.Tx, s *data.KnowledgeSource) error {
	key := sourceKey(s.KnowledgeBaseID, s.ID)
	if err := putJSON(tx.Bucket(bucketKBSources), key, s); err != nil {
		return err
	}
	pending := tx.Bucket(bucketKBPendingURLs)
	if s.Type == data.SourceURLs && s.Status == data.SourcePending {
		return pending.Put(key, nil)
	}
	return pending.Delete(key)
}

// KnowledgeSource implements service.KnowledgeTx.
func (t tx) KnowledgeSource(kbID, sourceID string) (*data.KnowledgeSource, error) {
	return getSource(t.b, kbID, sourceID)
}

// CountKnowledgeSources implements service.KnowledgeTx.
func (t tx) CountKnowledgeSources(kbID string) (int, error) {
	return scopeCount(t.b.Bucket(bucketKBSources), kbID), nil
}

// KnowledgeSources implements service.KnowledgeTx.
func (t tx) KnowledgeSources(kbID string) ([]*data.KnowledgeSource, error) {
	var out []*data.KnowledgeSource
	prefix := indexKey(kbID, "")
	c := t.b.Bucket(bucketKBSources).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var s data.KnowledgeSource
		if err := jsonUnmarshal(v, &s); err != nil {
			return nil, err
		}
		out = append(out, &s)
	}
	return out, nil
}

// PutKnowledgeSource implements service.KnowledgeTx.
func (t tx) PutKnowledgeSource(s *data.KnowledgeSource) error { return putSource(t.b, s) }

// DeleteKnowledgeSource implements service.KnowledgeTx.
func (t tx) DeleteKnowledgeSource(s *data.KnowledgeSource) error {
	key := sourceKey(s.KnowledgeBaseID, s.ID)
	if err := t.b.Bucket(bucketKBSources).Delete(key); err != nil {
		return err
	}
	if err := t.b.Bucket(bucketKBPendingURLs).Delete(key); err != nil {
		return err
	}
	if err := deletePrefix(t.b.Bucket(bucketKBChunks), chunkPrefix(s.KnowledgeBaseID, s.ID)); err != nil {
		return err
	}
	if err := bumpChunksRevision(t.b, s.KnowledgeBaseID); err != nil {
		return err
	}
	if s.Type == data.SourceFiles {
		path := t.db.sourceFilePath(s.WorkspaceID, s.KnowledgeBaseID, s.ID)
		t.b.OnCommit(func() { t.db.removeFiles([]string{path}) })
	}
	return nil
}

// PendingURLSources implements service.KnowledgeTx.
func (t tx) PendingURLSources() ([]*data.KnowledgeSource, error) {
	var out []*data.KnowledgeSource
	err := t.b.Bucket(bucketKBPendingURLs).ForEach(func(k, _ []byte) error {
		kbID, srcID, ok := strings.Cut(string(k), "\x00")
		if !ok {
			return nil
		}
		s, err := getSource(t.b, kbID, srcID)
		if err != nil || s == nil || s.Type != data.SourceURLs {
			return err // a mark without its url source is skipped
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// OnCommit implements service.KnowledgeTx: bbolt runs the functions after the commit,
// and the group commit's single writer keeps them in commit order.
func (t tx) OnCommit(fn func()) { t.b.OnCommit(fn) }
