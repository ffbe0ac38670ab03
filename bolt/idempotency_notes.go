package bolt

import (
	"bytes"
	"encoding/binary"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// bucketStartsToNote lists ("<ws>\x00<token id><key>") the responses kept before a
// start's answer named its conversation, for the job that tells which are a start's
// (service/idempotency_start_upgrade.go): filled by the schema 19 → 20 migration.
var bucketStartsToNote = []byte("idempotency_starts_to_note")

func init() { allBuckets = append(allBuckets, bucketStartsToNote) }

// StartsToNote implements service.AccountTx (schema 20's list).
func (t tx) StartsToNote(ws string, limit int) ([]data.KeptResponse, error) {
	prefix := indexKey(ws, "")
	var out []data.KeptResponse
	c := t.b.Bucket(bucketStartsToNote).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, _ = c.Next() {
		if key := k[len(prefix):]; len(key) >= 8 {
			out = append(out, data.KeptResponse{TokenID: int64(binary.BigEndian.Uint64(key)), Key: string(key[8:])})
		}
	}
	return out, nil
}

// StartNoted implements service.AccountTx.
func (t tx) StartNoted(ws string, tokenID int64, key string) error {
	return t.b.Bucket(bucketStartsToNote).Delete(append(indexKey(ws, ""), idempotencyKey(tokenID, key)...))
}

// listStartsToNote lists, under its token's workspace, every response kept with status
// 201 that names no conversation (the schema 19 → 20 migration): a conversation's start
// kept before starts were noted is among them, and only its sealed body tells, which the
// job reads. A response that does not decode, or whose token is gone (no one can replay
// it), is passed over.
func listStartsToNote(tx *bbolt.Tx) error {
	var entries []indexEntry
	if err := tx.Bucket(bucketIdempotency).ForEach(func(k, v []byte) error {
		var r data.IdempotentResponse
		if len(k) < 8 || jsonUnmarshal(v, &r) != nil || r.Status != 201 || r.ConversationID != "" || r.StartedConversationID != "" {
			return nil
		}
		token, err := getAPIKey(tx, apiKeyKey(int64(binary.BigEndian.Uint64(k))))
		if err != nil || token == nil {
			return nil
		}
		entries = append(entries, indexEntry{key: append(indexKey(token.WorkspaceID, ""), k...)})
		return nil
	}); err != nil {
		return err
	}
	return putSorted(tx.Bucket(bucketStartsToNote), entries) // in key order: see putSorted
}

// ListStartToNote implements service.AccountTx.
func (t tx) ListStartToNote(ws string, tokenID int64, key string) error {
	return t.b.Bucket(bucketStartsToNote).Put(append(indexKey(ws, ""), idempotencyKey(tokenID, key)...), nil)
}

// unlistWorkspaceStarts takes a deleted workspace's answers off the list: its tokens went
// with it, and their answers can no longer be replayed.
func unlistWorkspaceStarts(b *bbolt.Tx, ws string) error {
	prefix := indexKey(ws, "")
	c := b.Bucket(bucketStartsToNote).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}
