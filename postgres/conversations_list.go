package postgres

import (
	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
)

// ListConversations implements service.ConversationTx: a keyset page over the index
// conversations_by_workspace (workspace_id, id), or conversations_by_agent (migration
// 0036: workspace_id, agent_id, id) for one agent or each of the caller's agents
// (narrowByAgent); a status filter is a condition on the rows the index walk meets, but
// for active, which the planner reads from conversations_open (migration 0023).
func (t *tx) ListConversations(ws string, f data.ConversationFilter, agentIDs []string, req data.PageRequest) ([]*data.StoredConversation, data.Page, error) {
	return pageRows(t, conversationList(ws, f, agentIDs), req, func(rows pgx.Rows) (*data.StoredConversation, string, error) {
		c, err := scanConversation(rows)
		if err != nil {
			return nil, "", err
		}
		return c, c.ID, nil
	})
}

// conversationList is the keyset of a conversation list.
func conversationList(ws string, f data.ConversationFilter, agentIDs []string) keyset {
	ks := keyset{binding: binding("conversations", ws, f.AgentID, f.Status, pagecursor.Agents(agentIDs)), cols: conversationCols, key: "id",
		args: []any{ws}}
	ks.narrowByAgent("conversations", f.AgentID, f.Status, agentIDs, data.ConversationActive)
	return ks
}
