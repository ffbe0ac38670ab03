package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

func init() {
	agentDeleteHooks = append(agentDeleteHooks, removeAgentFromMembers)
	quotaCounters[data.LimitWorkspaceUsers] = func(t *tx, workspaceID string, upTo int64) (int64, error) {
		return t.countRowsUpTo(`SELECT 1 FROM members WHERE workspace_id = $1`, upTo, workspaceID)
	}
}

// memberCols are the columns scanMember reads, in its order.
const memberCols = `workspace_id, user_id, role, modules, agent_ids, created_at, updated_at`

func scanMember(row pgx.Row) (*data.MemberRecord, error) {
	var m data.MemberRecord
	var created, updated time.Time
	if err := row.Scan(&m.WorkspaceID, &m.UserID, &m.Role, &m.Modules, &m.AgentIDs, &created, &updated); err != nil {
		return nil, err
	}
	m.CreatedAt, m.UpdatedAt = data.NewTime(created), data.NewTime(updated)
	return &m, nil
}

// collectMembers reads every row of a members query.
func collectMembers(rows pgx.Rows, err error) ([]*data.MemberRecord, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*data.MemberRecord, error) { return scanMember(row) })
}

// Member implements service.AccountTx.
func (t *tx) Member(workspaceID, userID string) (*data.MemberRecord, error) {
	m, err := scanMember(t.queryRow(`SELECT `+memberCols+` FROM members WHERE workspace_id = $1 AND user_id = $2`, workspaceID, userID))
	if err != nil {
		return nil, noRows(err)
	}
	return m, nil
}

// PutMember implements service.AccountTx.
func (t *tx) PutMember(m *data.MemberRecord) error {
	_, err := t.exec(`INSERT INTO members (`+memberCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role, modules = excluded.modules,
			agent_ids = excluded.agent_ids, created_at = excluded.created_at, updated_at = excluded.updated_at,
			revision = nextval('account_revisions')`,
		m.WorkspaceID, m.UserID, m.Role, m.Modules, m.AgentIDs, m.CreatedAt.Time, m.UpdatedAt.Time)
	return err
}

// DeleteMember implements service.AccountTx: the membership and the user's tokens bound
// to the workspace.
func (t *tx) DeleteMember(workspaceID, userID string) error {
	if _, err := t.exec(`DELETE FROM members WHERE workspace_id = $1 AND user_id = $2`, workspaceID, userID); err != nil {
		return err
	}
	_, err := t.exec(`DELETE FROM api_keys WHERE workspace_id = $1 AND user_id = $2`, workspaceID, userID)
	return err
}

// MemberPage implements service.AccountTx: newest user first, as bbolt's index of
// members orders them.
func (t *tx) MemberPage(workspaceID string, req data.PageRequest) ([]*data.MemberRecord, data.Page, error) {
	return pageRows(t, memberList(workspaceID), req, func(rows pgx.Rows) (*data.MemberRecord, string, error) {
		m, err := scanMember(rows)
		if err != nil {
			return nil, "", err
		}
		return m, m.UserID, nil
	})
}

// memberList is the keyset of a workspace's members, in the order of the primary key
// (workspace_id, user_id) with the workspace compared as a range (keyset.within): a
// generic plan otherwise walked members_by_user past other workspaces' members
// (TestAgentAndAccountListsSeekTheScope).
func memberList(workspaceID string) keyset {
	return keyset{
		binding: binding("members", workspaceID),
		cols:    memberCols,
		from:    `members WHERE workspace_id >= $1 AND workspace_id <= $1`,
		key:     "user_id",
		within:  "workspace_id",
		args:    []any{workspaceID},
	}
}

// Members implements service.AccountTx (oldest user first).
func (t *tx) Members(workspaceID string) ([]*data.MemberRecord, error) {
	return collectMembers(t.query(`SELECT `+memberCols+` FROM members WHERE workspace_id = $1 ORDER BY user_id`, workspaceID))
}

// MemberWorkspaces implements service.AccountTx (oldest workspace first).
func (t *tx) MemberWorkspaces(userID string) ([]string, error) {
	rows, err := t.query(`SELECT workspace_id FROM members WHERE user_id = $1 ORDER BY workspace_id`, userID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// MemberRevision implements service.AccountTx.
func (t *tx) MemberRevision(workspaceID, userID string) (uint64, error) {
	return t.accountRevision(`SELECT revision FROM members WHERE workspace_id = $1 AND user_id = $2`, workspaceID, userID)
}

// AgentInWorkspace implements service.AccountTx.
func (t *tx) AgentInWorkspace(workspaceID, agentID string) (bool, error) {
	var found bool
	err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM agents WHERE id = $1 AND workspace_id = $2)`, agentID, workspaceID).Scan(&found)
	return found, err
}

// removeAgentFromMembers drops a deleted agent from every member's agent_ids (an agent
// delete hook). A member whose list becomes empty would gain every agent, so such a
// member gets data.NoAgent instead.
func removeAgentFromMembers(t *tx, workspaceID, agentID string) error {
	_, err := t.exec(`UPDATE members SET
			agent_ids = coalesce(nullif(array_remove(agent_ids, $2::text), '{}'), ARRAY[$3::text]),
			revision = nextval('account_revisions')
		WHERE workspace_id = $1 AND $2 = ANY (agent_ids)`,
		workspaceID, agentID, data.NoAgent)
	return err
}
