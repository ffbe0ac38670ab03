package bolt

import (
	"bytes"
	"fmt"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
)

// bucketConversationsListed indexes conversations for GET /api/v1/conversations (schema
// 25) in the scopes of list_by_agent.go: "<ws>\x00<id>" and "<ws>/a/<agent id>\x00<id>",
// each holding the conversation's status (conversationListValue), so that a page reads
// only the records it shows: a caller limited to some agents walks their scopes merged.
var bucketConversationsListed = []byte("conversations_listed")

// bucketConversationsByStatus holds the same scopes per status (schema 26):
// "<scope>/s/<status>\x00<id>", so that a status filter's page walks its status's
// entries only, never passing over the other's (an active conversation older than many
// ended ones).
var bucketConversationsByStatus = []byte("conversations_by_status")

func init() {
	allBuckets = append(allBuckets, bucketConversationsListed, bucketConversationsByStatus)
}

// conversationListValue is the value of a conversation's entries: its status's first
// byte ("a" active, "e" ended).
func conversationListValue(status string) []byte {
	if status == "" {
		return nil
	}
	return []byte(status[:1])
}

// listConversation writes c's entries with its status, and moves its status entries
// from old's status (nil for a new conversation).
func listConversation(tx *bbolt.Tx, old, c *data.StoredConversation) error {
	b, byStatus := tx.Bucket(bucketConversationsListed), tx.Bucket(bucketConversationsByStatus)
	for _, scope := range agentScopes(c.WorkspaceID, c.AgentID) {
		if err := b.Put(indexKey(scope, c.ID), conversationListValue(c.Status)); err != nil {
			return err
		}
		if old != nil && old.Status != c.Status {
			if err := indexDelete(byStatus, listStatusScope(scope, old.Status), c.ID); err != nil {
				return err
			}
		}
		if err := indexPut(byStatus, listStatusScope(scope, c.Status), c.ID); err != nil {
			return err
		}
	}
	return nil
}

// unlistConversation removes c's entries.
func unlistConversation(tx *bbolt.Tx, c *data.StoredConversation) error {
	b, byStatus := tx.Bucket(bucketConversationsListed), tx.Bucket(bucketConversationsByStatus)
	for _, scope := range agentScopes(c.WorkspaceID, c.AgentID) {
		if err := indexDelete(b, scope, c.ID); err != nil {
			return err
		}
		if err := indexDelete(byStatus, listStatusScope(scope, c.Status), c.ID); err != nil {
			return err
		}
	}
	return nil
}

// ListConversations implements service.ConversationTx: a walk of the workspace's scope,
// of the agent's, or of the caller's agents' merged; with a status filter, those scopes'
// parts for the status in bucketConversationsByStatus. Only the page's records are read.
func (t tx) ListConversations(ws string, f data.ConversationFilter, agentIDs []string, req data.PageRequest) ([]*data.StoredConversation, data.Page, error) {
	// Named in cursors as the schema-25 list, whichever bucket is walked: a cursor of
	// before the upgrade reads on.
	spec := listSpec{index: bucketConversationsListed, scope: ws, filter: conversationListKey(f, agentIDs),
		scopes: walkScopes(ws, f.AgentID, f.Status, agentIDs)}
	if f.Status != "" {
		spec.walked = bucketConversationsByStatus
	}
	ids, page, err := t.db.list(t.b, spec, req)
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.StoredConversation, 0, len(ids))
	for _, id := range ids {
		c, err := t.Conversation(id)
		if err != nil {
			return nil, page, err
		}
		if c == nil {
			return nil, page, fmt.Errorf("conversation %s is listed but not stored", id)
		}
		list = append(list, c)
	}
	return list, page, nil
}

// conversationListKey names a list's filters and the caller's agents in its cursors: a
// cursor taken under other ones is refused.
func conversationListKey(f data.ConversationFilter, agentIDs []string) string {
	return strings.Join([]string{"conversations", f.AgentID, f.Status, pagecursor.Agents(agentIDs)}, "\x00")
}

// listConversationsOfStore fills the list index from the stored conversations (the
// schema 24 → 25 migration, in the transaction that raises the version, so a crash
// leaves schema 24 to fill it again), each record decoded for its workspace, agent and
// status only, the entries put in key order (putSorted).
func listConversationsOfStore(tx *bbolt.Tx) error {
	var entries []indexEntry
	if err := tx.Bucket(bucketConversations).ForEach(func(k, v []byte) error {
		var c struct {
			WorkspaceID string `json:"workspace_id"`
			AgentID     string `json:"agent_id"`
			Status      string `json:"status"`
		}
		if err := jsonUnmarshal(v, &c); err != nil {
			return fmt.Errorf("decoding conversation %q: %w", k, err)
		}
		for _, scope := range agentScopes(c.WorkspaceID, c.AgentID) {
			entries = append(entries, indexEntry{indexKey(scope, string(k)), conversationListValue(c.Status)})
		}
		return nil
	}); err != nil {
		return err
	}
	return putSorted(tx.Bucket(bucketConversationsListed), entries)
}

// statusesOfListed is the schema 25 → 26 migration: each entry of conversations_listed
// put again under its scope's part for its status (the entry's value, its status's first
// byte), no record read; in key order (putSorted), in the transaction that raises the
// version, so a crash leaves schema 25 to fill it again.
func statusesOfListed(tx *bbolt.Tx) error {
	statuses := map[string]string{}
	for _, s := range []string{data.ConversationActive, data.ConversationEnded} {
		statuses[string(conversationListValue(s))] = s
	}
	var entries []indexEntry
	if err := tx.Bucket(bucketConversationsListed).ForEach(func(k, v []byte) error {
		end := bytes.LastIndexByte(k, 0) // ids hold no NUL; scopes end at the last one
		if end < 0 {
			return fmt.Errorf("conversation list entry %q names no conversation", k)
		}
		status, ok := statuses[string(v)]
		if !ok {
			return nil // an entry without a status (never written so): no status lists it; the open goes on
		}
		entries = append(entries, indexEntry{indexKey(listStatusScope(string(k[:end]), status), string(k[end+1:])), nil})
		return nil
	}); err != nil {
		return err
	}
	return putSorted(tx.Bucket(bucketConversationsByStatus), entries)
}

// unlistWorkspaceConversations removes a workspace's entries, every kind of scope.
func unlistWorkspaceConversations(tx *bbolt.Tx, ws string) error {
	b := tx.Bucket(bucketConversationsListed)
	if err := deletePrefix(b, indexKey(ws, "")); err != nil {
		return err
	}
	if err := deletePrefix(b, []byte(ws+"/a/")); err != nil {
		return err
	}
	return deletePrefix(tx.Bucket(bucketConversationsByStatus), []byte(ws+"/"))
}
