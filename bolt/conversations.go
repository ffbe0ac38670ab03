package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Buckets of conversations: the records, their items ("<id>\x00<8-byte sequence>"), the
// active ones by last update ("<8-byte updated_at ms>\x00<id>", for the idle sweep), a
// workspace index (for the workspace's delete) and each workspace's active ones
// ("<ws>\x00<id>" → updated_at and lease_until in ms, 8 bytes each, 0 without a lease:
// the bound on open conversations counts them without reading the records), and the
// ended ones by the call each became (call id → conversation id: the call's delete takes
// its conversation along, schema 12).
var (
	bucketConversations     = []byte("conversations")
	bucketConversationItems = []byte("conversation_items")
	bucketConversationsIdle = []byte("conversations_idle")
	bucketConversationsByWS = []byte("conversations_by_ws")
	bucketConversationsOpen = []byte("conversations_open")
	bucketConversationsCall = []byte("conversations_by_call")
	// bucketConversationsToRedact lists ("<ws>\x00<id>") the conversations that ended
	// before schema 12, for the upgrade's job.
	bucketConversationsToRedact = []byte("conversations_to_redact")
)

func init() {
	allBuckets = append(allBuckets, bucketConversations, bucketConversationItems, bucketConversationsIdle, bucketConversationsByWS, bucketConversationsOpen, bucketConversationsCall, bucketConversationsToRedact)
	workspaceCascades = append(workspaceCascades, func(_ *DB, tx *bbolt.Tx, ws string) error { return deleteWorkspaceConversations(tx, ws) })
}

func conversationItemKey(id string, seq int) []byte {
	k := make([]byte, 0, len(id)+9)
	k = append(k, id...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint64(k, uint64(seq))
}

func conversationIdleKey(c *data.StoredConversation) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(c.UpdatedAt.UnixMilli()))
	k = append(k, 0)
	return append(k, c.ID...)
}

// Conversation implements service.ConversationTx.
func (t tx) Conversation(id string) (*data.StoredConversation, error) {
	var c data.StoredConversation
	found, err := getJSON(t.b.Bucket(bucketConversations), []byte(id), &c)
	if err != nil || !found {
		return nil, err
	}
	c.Messages = nil
	return &c, nil
}

// ConversationItems implements service.ConversationTx.
func (t tx) ConversationItems(id string) ([]data.ConversationItem, error) {
	prefix := append([]byte(id), 0)
	var out []data.ConversationItem
	c := t.b.Bucket(bucketConversationItems).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var it data.ConversationItem
		if err := jsonUnmarshal(v, &it); err != nil {
			return nil, fmt.Errorf("decoding conversation item %q: %w", k, err)
		}
		out = append(out, it)
	}
	return out, nil
}

// InsertConversation implements service.ConversationTx.
func (t tx) InsertConversation(c *data.StoredConversation, items []data.ConversationItem) error {
	if err := indexPut(t.b.Bucket(bucketConversationsByWS), c.WorkspaceID, c.ID); err != nil {
		return err
	}
	return t.putConversation(nil, c, items)
}

// PutConversation implements service.ConversationTx.
func (t tx) PutConversation(c *data.StoredConversation, items []data.ConversationItem) error {
	old, err := t.Conversation(c.ID)
	if err != nil {
		return err
	}
	if old == nil {
		return fmt.Errorf("conversation %s is not stored", c.ID)
	}
	return t.putConversation(old, c, items)
}

// putConversation writes c, appends items and moves the idle and open entries from
// old's to c's.
func (t tx) putConversation(old, c *data.StoredConversation, items []data.ConversationItem) error {
	idle := t.b.Bucket(bucketConversationsIdle)
	if old != nil && old.Status == data.ConversationActive {
		if err := idle.Delete(conversationIdleKey(old)); err != nil {
			return err
		}
	}
	if err := moveOpenConversation(t.b, c); err != nil {
		return err
	}
	if c.Status == data.ConversationActive {
		if err := idle.Put(conversationIdleKey(c), nil); err != nil {
			return err
		}
	}
	if c.CallID != nil {
		if err := t.b.Bucket(bucketConversationsCall).Put([]byte(*c.CallID), []byte(c.ID)); err != nil {
			return err
		}
	}
	itemsB := t.b.Bucket(bucketConversationItems)
	for i := range items {
		if err := putJSON(itemsB, conversationItemKey(c.ID, c.Items-len(items)+i), &items[i]); err != nil {
			return err
		}
	}
	if old == nil || old.Status != c.Status {
		if err := listConversation(t.b, old, c); err != nil {
			return err
		}
	}
	rec := *c
	rec.Messages = nil // the items are stored apart
	return putJSON(t.b.Bucket(bucketConversations), []byte(c.ID), &rec)
}

// IdleConversations implements service.ConversationTx.
func (t tx) IdleConversations(before time.Time, limit int) ([]string, error) {
	var out []string
	c := t.b.Bucket(bucketConversationsIdle).Cursor()
	for k, _ := c.First(); k != nil && len(out) < limit; k, _ = c.Next() {
		if int64(binary.BigEndian.Uint64(k[:8])) >= before.UnixMilli() {
			break
		}
		out = append(out, string(k[9:]))
	}
	return out, nil
}

// moveOpenConversation keeps c's entry among its workspace's open conversations in step
// with c: written while it is active, removed when it ends.
func moveOpenConversation(tx *bbolt.Tx, c *data.StoredConversation) error {
	b := tx.Bucket(bucketConversationsOpen)
	if c.Status != data.ConversationActive {
		return indexDelete(b, c.WorkspaceID, c.ID)
	}
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(c.UpdatedAt.UnixMilli()))
	var lease int64
	if c.Lease != nil {
		lease = c.Lease.Until.UnixMilli()
	}
	return b.Put(indexKey(c.WorkspaceID, c.ID), binary.BigEndian.AppendUint64(v, uint64(lease)))
}

// OpenConversations implements service.ConversationTx, from the workspace's entries
// (bbolt has one writer, so the count holds for the transaction).
func (t tx) OpenConversations(ws string, updatedAfter, leasedAfter time.Time, limit int) (int, error) {
	prefix := indexKey(ws, "")
	n := 0
	c := t.b.Bucket(bucketConversationsOpen).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && n < limit; k, v = c.Next() {
		if len(v) != 16 {
			return 0, fmt.Errorf("open conversation %q: entry of %d bytes", k, len(v))
		}
		updated, lease := int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:]))
		if time.UnixMilli(updated).After(updatedAfter) || (lease != 0 && time.UnixMilli(lease).After(leasedAfter)) {
			n++
		}
	}
	return n, nil
}

// ActiveConversationOn implements service.ConversationTx: it reads the records of the
// workspace's active conversations (bounded, conventions §21), their agent and version
// only.
func (t tx) ActiveConversationOn(ws, agentID string, n int) (string, error) {
	records := t.b.Bucket(bucketConversations)
	for _, id := range scopeIDs(t.b.Bucket(bucketConversationsOpen), ws) {
		var c struct {
			AgentID      string `json:"agent_id"`
			AgentVersion *int   `json:"agent_version"`
		}
		found, err := getJSON(records, []byte(id), &c)
		if err != nil {
			return "", err
		}
		if found && c.AgentID == agentID && c.AgentVersion != nil && *c.AgentVersion == n {
			return id, nil
		}
	}
	return "", nil
}

// indexOpenConversations fills each workspace's open conversations of a file written
// before they were kept (the schema 10 → 11 migration), from the active ones the idle
// index lists. An older binary would end conversations without removing their entries,
// so the version keeps it out.
func indexOpenConversations(tx *bbolt.Tx) error {
	records := tx.Bucket(bucketConversations)
	return tx.Bucket(bucketConversationsIdle).ForEach(func(k, _ []byte) error {
		var c data.StoredConversation
		found, err := getJSON(records, k[9:], &c)
		if err != nil || !found || c.Status != data.ConversationActive {
			return err
		}
		return moveOpenConversation(tx, &c)
	})
}

// RewriteConversationItems implements service.ConversationTx.
func (t tx) RewriteConversationItems(id string, items []data.ConversationItem) error {
	var c data.StoredConversation
	found, err := getJSON(t.b.Bucket(bucketConversations), []byte(id), &c)
	if err != nil {
		return err
	}
	if !found || c.Items != len(items) {
		return fmt.Errorf("conversation %s: %d items to rewrite, stored %d (found %v)", id, len(items), c.Items, found)
	}
	b := t.b.Bucket(bucketConversationItems)
	for i := range items {
		if err := putJSON(b, conversationItemKey(id, i), &items[i]); err != nil {
			return err
		}
	}
	return nil
}

// ConversationOfCall implements service.ConversationTx.
func (t tx) ConversationOfCall(callID string) (string, error) {
	return string(t.b.Bucket(bucketConversationsCall).Get([]byte(callID))), nil
}

// DeleteConversation implements service.ConversationTx.
func (t tx) DeleteConversation(id string) error {
	var c data.StoredConversation
	found, err := getJSON(t.b.Bucket(bucketConversations), []byte(id), &c)
	if err != nil || !found {
		return err
	}
	if err := deleteConversation(t.b, &c); err != nil {
		return err
	}
	if err := indexDelete(t.b.Bucket(bucketConversationsByWS), c.WorkspaceID, id); err != nil {
		return err
	}
	if err := unlistConversation(t.b, &c); err != nil {
		return err
	}
	return indexDelete(t.b.Bucket(bucketConversationsOpen), c.WorkspaceID, id)
}

// ConversationsToRedact implements service.ConversationTx (schema 12's list).
func (t tx) ConversationsToRedact(ws string, limit int) ([]string, error) {
	ids := scopeIDs(t.b.Bucket(bucketConversationsToRedact), ws)
	return ids[:min(len(ids), limit)], nil
}

// ConversationRedacted implements service.ConversationTx.
func (t tx) ConversationRedacted(ws, id string) error {
	return indexDelete(t.b.Bucket(bucketConversationsToRedact), ws, id)
}

// ListConversationToRedact implements service.ConversationTx.
func (t tx) ListConversationToRedact(ws, id string) error {
	return indexPut(t.b.Bucket(bucketConversationsToRedact), ws, id)
}

// deleteConversation removes c's record, items, idle entry, call entry and place on the
// upgrade's list; the workspace's indexes are the caller's.
func deleteConversation(tx *bbolt.Tx, c *data.StoredConversation) error {
	if c.Status == data.ConversationActive {
		if err := tx.Bucket(bucketConversationsIdle).Delete(conversationIdleKey(c)); err != nil {
			return err
		}
	}
	if c.CallID != nil {
		if err := tx.Bucket(bucketConversationsCall).Delete([]byte(*c.CallID)); err != nil {
			return err
		}
	}
	if err := indexDelete(tx.Bucket(bucketConversationsToRedact), c.WorkspaceID, c.ID); err != nil {
		return err
	}
	if err := deletePrefix(tx.Bucket(bucketConversationItems), append([]byte(c.ID), 0)); err != nil {
		return err
	}
	return tx.Bucket(bucketConversations).Delete([]byte(c.ID))
}

// indexEndedConversations fills the call index of a file written before it was kept (the
// schema 11 → 12 migration) from the ended conversations, and lists each of them for the
// upgrade's job (conversation.redact_ended), which redacts it as it would be now, or
// deletes it when its call is gone. An older binary would delete calls without their
// conversations, and end conversations unredacted and unlisted, so the version keeps it
// out.
func indexEndedConversations(tx *bbolt.Tx) error {
	calls, toRedact := tx.Bucket(bucketConversationsCall), tx.Bucket(bucketConversationsToRedact)
	return tx.Bucket(bucketConversations).ForEach(func(k, v []byte) error {
		var c data.StoredConversation
		if err := jsonUnmarshal(v, &c); err != nil {
			return fmt.Errorf("decoding conversation %q: %w", k, err)
		}
		if c.Status != data.ConversationEnded {
			return nil
		}
		if c.CallID != nil {
			if err := calls.Put([]byte(*c.CallID), k); err != nil {
				return err
			}
		}
		return indexPut(toRedact, c.WorkspaceID, c.ID)
	})
}

// deleteWorkspaceConversations removes a workspace's conversations with their items and
// index entries.
func deleteWorkspaceConversations(tx *bbolt.Tx, ws string) error {
	byWS := tx.Bucket(bucketConversationsByWS)
	for _, id := range scopeIDs(byWS, ws) {
		var c data.StoredConversation
		found, err := getJSON(tx.Bucket(bucketConversations), []byte(id), &c)
		if err != nil {
			return err
		}
		if found {
			if err := deleteConversation(tx, &c); err != nil {
				return err
			}
		}
		if err := deleteConversationKeptResponses(tx, id); err != nil {
			return err
		}
	}
	if err := unlistWorkspaceConversations(tx, ws); err != nil {
		return err
	}
	for _, b := range [][]byte{bucketConversationsOpen, bucketConversationsToRedact} {
		if err := deletePrefix(tx.Bucket(b), indexKey(ws, "")); err != nil {
			return err
		}
	}
	return deletePrefix(byWS, indexKey(ws, ""))
}
