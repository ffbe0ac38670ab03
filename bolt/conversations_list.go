package bolt

import (
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// bucketConversationsListed indexes conversations for GET /api/v1/conversations (schema
// 25): "<ws>\x00<id>" and "<ws>/a/<agent id>\x00<id>", each holding the conversation's
// status (conversationListValue), so that a page reads only the records it shows: a
// caller limited to some agents walks their scopes merged, a status filter passes over
// the entries of the other status by their value alone.
var bucketConversationsListed = []byte("conversations_listed")

func init() { allBuckets = append(allBuckets, bucketConversationsListed) }

// maxConversationListPass bounds the entries of the other status one page passes over
// (an active conversation among many ended ones): a page that reaches it ends with a
// next_cursor that resumes past them. A variable for the tests.
var maxConversationListPass = 100_000

// conversationListScopes are the scopes c is listed under.
func conversationListScopes(ws, agentID string) []string {
	return []string{ws, conversationAgentScope(ws, agentID)}
}

func conversationAgentScope(ws, agentID string) string { return ws + "/a/" + agentID }

// conversationListValue is the value of a conversation's entries: its status's first
// byte ("a" active, "e" ended).
func conversationListValue(status string) []byte {
	if status == "" {
		return nil
	}
	return []byte(status[:1])
}

// listConversation writes c's entries with its status.
func listConversation(tx *bbolt.Tx, c *data.StoredConversation) error {
	b := tx.Bucket(bucketConversationsListed)
	for _, scope := range conversationListScopes(c.WorkspaceID, c.AgentID) {
		if err := b.Put(indexKey(scope, c.ID), conversationListValue(c.Status)); err != nil {
			return err
		}
	}
	return nil
}

// unlistConversation removes c's entries.
func unlistConversation(tx *bbolt.Tx, c *data.StoredConversation) error {
	b := tx.Bucket(bucketConversationsListed)
	for _, scope := range conversationListScopes(c.WorkspaceID, c.AgentID) {
		if err := indexDelete(b, scope, c.ID); err != nil {
			return err
		}
	}
	return nil
}

// ListConversations implements service.ConversationTx: a walk of the workspace's scope,
// of the agent's, or of the caller's agents' merged; a status filter's other entries
// passed over by their value. Only the page's records are read.
func (t tx) ListConversations(ws string, f data.ConversationFilter, agentIDs []string, req data.PageRequest) ([]*data.StoredConversation, data.Page, error) {
	spec := listSpec{index: bucketConversationsListed, scope: ws, value: conversationListValue(f.Status), maxPass: maxConversationListPass,
		filter: conversationListKey(f, agentIDs)}
	switch {
	case f.AgentID != "" && (agentIDs == nil || slices.Contains(agentIDs, f.AgentID)):
		spec.scopes = []string{conversationAgentScope(ws, f.AgentID)}
	case f.AgentID != "":
		spec.scopes = []string{} // an agent the caller may not see: nothing
	case agentIDs != nil:
		spec.scopes = make([]string, 0, len(agentIDs))
		for _, a := range agentIDs {
			spec.scopes = append(spec.scopes, conversationAgentScope(ws, a))
		}
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
	agents := "*"
	if agentIDs != nil {
		agents = strings.Join(agentIDs, ",")
	}
	return strings.Join([]string{"conversations", f.AgentID, f.Status, agents}, "\x00")
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
		for _, scope := range conversationListScopes(c.WorkspaceID, c.AgentID) {
			entries = append(entries, indexEntry{indexKey(scope, string(k)), conversationListValue(c.Status)})
		}
		return nil
	}); err != nil {
		return err
	}
	return putSorted(tx.Bucket(bucketConversationsListed), entries)
}

// unlistWorkspaceConversations removes a workspace's entries, both kinds of scope.
func unlistWorkspaceConversations(tx *bbolt.Tx, ws string) error {
	b := tx.Bucket(bucketConversationsListed)
	if err := deletePrefix(b, indexKey(ws, "")); err != nil {
		return err
	}
	return deletePrefix(b, []byte(ws+"/a/"))
}
