package postgres

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	quotaCounters[data.LimitAgents] = func(t *tx, ws string, upTo int64) (int64, error) {
		return t.countWhereUpTo(`agents WHERE workspace_id = $1`, upTo, ws)
	}
	workspaceCascades = append(workspaceCascades, deleteWorkspaceAgents)
	knowledgeBaseDeleteHooks = append(knowledgeBaseDeleteHooks, removeKnowledgeBaseFromAgents)
}

const agentCols = `id, workspace_id, name, status, published_version, last_version, config, privacy, created_at, updated_at, published_at, max_concurrent_calls`

// Agent implements service.AgentTx.
func (t *tx) Agent(id string) (*data.StoredAgent, error) {
	a, err := scanAgent(t.queryRow(`SELECT `+agentCols+` FROM agents WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return a, nil
}

// Agents implements service.AgentTx: one statement for every id.
func (t *tx) Agents(ids []string) ([]*data.StoredAgent, error) {
	out := make([]*data.StoredAgent, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := t.query(`SELECT `+agentCols+` FROM agents WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[string]*data.StoredAgent, len(ids))
	for rows.Next() {
		a, err := scanAgent(rows)
		if err != nil {
			return nil, err
		}
		byID[a.ID] = a
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out, nil
}

func scanAgent(row pgx.Row) (*data.StoredAgent, error) {
	var a data.StoredAgent
	var config, privacy []byte
	var created, updated time.Time
	var published *time.Time
	if err := row.Scan(&a.ID, &a.WorkspaceID, &a.Name, &a.Status, &a.PublishedVersion, &a.LastVersion,
		&config, &privacy, &created, &updated, &published, &a.MaxConcurrentCalls); err != nil {
		return nil, err
	}
	if err := data.DecodeJSON(config, &a.AgentConfig); err != nil {
		return nil, fmt.Errorf("decoding agent %s: %w", a.ID, err)
	}
	if err := data.DecodeJSON(privacy, &a.Privacy); err != nil {
		return nil, fmt.Errorf("decoding agent %s: %w", a.ID, err)
	}
	a.CreatedAt, a.UpdatedAt, a.PublishedAt = storedTime(created), storedTime(updated), storedTimePtr(published)
	return &a, nil
}

// AgentRevision implements service.AgentTx: the row's revision, drawn from a sequence on
// every write.
func (t *tx) AgentRevision(id string) (uint64, error) {
	var rev int64
	if err := t.queryRow(`SELECT revision FROM agents WHERE id = $1`, id).Scan(&rev); err != nil {
		return 0, noRows(err)
	}
	return uint64(rev), nil
}

// PutAgent implements service.AgentTx. The status index is an index on the row, so
// oldStatus has nothing to move; a.JSON is not kept (the row is columns, encoded here).
func (t *tx) PutAgent(a *data.StoredAgent, oldStatus string) error {
	config, err := json.Marshal(a.AgentConfig)
	if err != nil {
		return fmt.Errorf("encoding agent %s: %w", a.ID, err)
	}
	privacy, err := json.Marshal(a.Privacy)
	if err != nil {
		return fmt.Errorf("encoding agent %s: %w", a.ID, err)
	}
	_, err = t.exec(`INSERT INTO agents (`+agentCols+`, name_folded) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (id) DO UPDATE SET workspace_id = EXCLUDED.workspace_id, name = EXCLUDED.name, name_folded = EXCLUDED.name_folded,
			status = EXCLUDED.status, published_version = EXCLUDED.published_version,
			last_version = EXCLUDED.last_version, config = EXCLUDED.config, privacy = EXCLUDED.privacy,
			created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at,
			published_at = EXCLUDED.published_at, max_concurrent_calls = EXCLUDED.max_concurrent_calls,
			revision = nextval('agent_revisions')`,
		a.ID, a.WorkspaceID, a.Name, a.Status, a.PublishedVersion, a.LastVersion, config, privacy,
		a.CreatedAt.Time, a.UpdatedAt.Time, paramTime(a.PublishedAt), a.MaxConcurrentCalls, data.FoldCase(a.Name))
	return err
}

// DeleteAgent implements service.AgentTx: the row and its versions go, then the hooks
// other resources registered run (numbers unbound, members' agent_ids); calls stay.
func (t *tx) DeleteAgent(a *data.StoredAgent) error {
	if _, err := t.exec(`DELETE FROM agent_versions WHERE agent_id = $1`, a.ID); err != nil {
		return err
	}
	if _, err := t.exec(`DELETE FROM agents WHERE id = $1`, a.ID); err != nil {
		return err
	}
	for _, hook := range agentDeleteHooks {
		if err := hook(t, a.WorkspaceID, a.ID); err != nil {
			return err
		}
	}
	return nil
}

// AgentIDs implements service.AgentTx. The scope (workspace, or status) is a walk of
// its index (workspace_id[, status], id) and only a condition on it; a search is the
// bbolt engine's bounded walk of the scope (scanPage), only among what it keeps and
// counts, so both engines give the same pages. A name search compares the folded query
// to name_folded, written by data.FoldCase as the bbolt engine folds (lower() would fold
// by the database's locale: only ASCII under the C locale).
func (t *tx) AgentIDs(ws, status string, only []string, search service.AgentSearch, req data.PageRequest) ([]string, data.Page, error) {
	scanID := func(row pgx.Row) (string, string, error) {
		var id string
		err := row.Scan(&id)
		return id, id, err
	}
	if search.Name == "" && search.KnowledgeBaseID == "" {
		return pageRows(t, agentList(ws, status, only, search), req, func(rows pgx.Rows) (string, string, error) { return scanID(rows) })
	}
	return scanPage(t, agentSearchWalk(ws, status, only, search), req, scanID)
}

// agentList is the keyset of AgentIDs' agents without a search, and its binding with one.
func agentList(ws, status string, only []string, search service.AgentSearch) keyset {
	ks := agentScope(ws, status)
	if len(only) > 0 {
		ks.args = append(ks.args, only)
		ks.from += fmt.Sprintf(` AND id = ANY($%d::text[])`, len(ks.args))
	}
	bound := []string{"agents", ws, status, strings.Join(only, ","), search.Name}
	if search.KnowledgeBaseID != "" {
		bound = append(bound, "kb", search.KnowledgeBaseID)
	}
	ks.binding = binding(bound...)
	return ks
}

// agentScope is the keyset of a workspace's agents, of one status unless status is "".
// The scope's index (agents_by_workspace, or agents_by_status) is walked in its order,
// its last scope column compared as a range (keyset.within): a generic plan otherwise
// walked the primary key past other workspaces' agents
// (TestAgentAndAccountListsSeekTheScope).
func agentScope(ws, status string) keyset {
	ks := keyset{cols: "id", key: "id", args: []any{ws},
		from: `agents WHERE workspace_id >= $1 AND workspace_id <= $1`, within: "workspace_id"}
	if status != "" {
		ks.args = append(ks.args, status)
		ks.from, ks.within = `agents WHERE workspace_id = $1 AND status >= $2 AND status <= $2`, "status"
	}
	return ks
}

// agentSearchWalk is AgentIDs' walk of the scope for a search: only narrows the walk
// (the agents outside it are neither looked at nor counted, so that they shape none of a
// limited caller's pages), the name and the knowledge base are what it keeps, as bolt's
// AgentIDs counts them.
func agentSearchWalk(ws, status string, only []string, search service.AgentSearch) scanWalk {
	ks := agentList(ws, status, only, search)
	var keep []string
	if search.Name != "" {
		ks.args = append(ks.args, data.FoldCase(search.Name))
		keep = append(keep, fmt.Sprintf(`strpos(name_folded, $%d) > 0`, len(ks.args)))
	}
	if kb := search.KnowledgeBaseID; kb != "" {
		// AgentsUsingKnowledgeBase's test, for one agent.
		ks.args = append(ks.args, kb)
		keep = append(keep, fmt.Sprintf(`(config->'llm_config'->'knowledge_base_ids' ? $%d
			OR EXISTS (SELECT 1 FROM agent_versions v WHERE v.agent_id = agents.id AND v.config->'llm_config'->'knowledge_base_ids' ? $%d))`, len(ks.args), len(ks.args)))
	}
	return scanWalk{ks: ks, table: "agents", keep: strings.Join(keep, " AND "), maxScan: search.MaxScan, few: len(only) > 0}
}

const versionCols = `agent_id, version_number, description, name, config, created_at, published_by`

// PutAgentVersion implements service.AgentTx.
func (t *tx) PutAgentVersion(v *data.AgentVersion) error {
	config, err := json.Marshal(v.AgentConfig)
	if err != nil {
		return fmt.Errorf("encoding version %d of agent %s: %w", v.VersionNumber, v.AgentID, err)
	}
	_, err = t.exec(`INSERT INTO agent_versions (`+versionCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (agent_id, version_number) DO UPDATE SET description = EXCLUDED.description,
			name = EXCLUDED.name, config = EXCLUDED.config, created_at = EXCLUDED.created_at,
			published_by = EXCLUDED.published_by`,
		v.AgentID, v.VersionNumber, v.Description, v.Name, config, v.CreatedAt.Time, v.PublishedBy)
	return err
}

// DeleteAgentVersion implements service.AgentTx.
func (t *tx) DeleteAgentVersion(agentID string, n int) error {
	_, err := t.exec(`DELETE FROM agent_versions WHERE agent_id = $1 AND version_number = $2`, agentID, n)
	return err
}

// AgentVersionCount implements service.AgentTx: the primary key's walk, at most upTo.
func (t *tx) AgentVersionCount(agentID string, upTo int) (int, error) {
	n, err := t.countWhereUpTo(`agent_versions WHERE agent_id = $1`, int64(upTo), agentID)
	return int(n), err
}

// scanVersion reads the versionCols of a row, then extra.
func scanVersion(row pgx.Row, extra ...any) (*data.AgentVersion, error) {
	var v data.AgentVersion
	var config []byte
	var created time.Time
	dest := append([]any{&v.AgentID, &v.VersionNumber, &v.Description, &v.Name, &config, &created, &v.PublishedBy}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	if err := data.DecodeJSON(config, &v.AgentConfig); err != nil {
		return nil, fmt.Errorf("decoding version %d of agent %s: %w", v.VersionNumber, v.AgentID, err)
	}
	v.CreatedAt = storedTime(created)
	return &v, nil
}

// AgentVersion implements service.AgentTx.
func (t *tx) AgentVersion(agentID string, n int) (*data.AgentVersion, error) {
	v, err := scanVersion(t.queryRow(`SELECT `+versionCols+` FROM agent_versions WHERE agent_id = $1 AND version_number = $2`, agentID, n))
	if err != nil {
		return nil, noRows(err)
	}
	return v, nil
}

// AgentVersions implements service.AgentTx: newest (highest number) first.
func (t *tx) AgentVersions(agentID string, req data.PageRequest) ([]*data.AgentVersion, data.Page, error) {
	return pageRows(t, versionList(agentID), req, func(rows pgx.Rows) (*data.AgentVersion, string, error) {
		var key string
		v, err := scanVersion(rows, &key)
		return v, key, err
	})
}

// versionList is the keyset of an agent's versions, in the order of agent_versions_page,
// the agent compared as a range (keyset.within): a generic plan otherwise walked the
// primary key past other agents' versions and sorted the agent's
// (TestScopedListsSeekTheScope).
func versionList(agentID string) keyset {
	return keyset{
		binding: binding("agent_versions", agentID),
		cols:    versionCols + ", version_key", key: "version_key", within: "agent_id",
		from: `agent_versions WHERE agent_id >= $1 AND agent_id <= $1`, args: []any{agentID},
	}
}

// KnowledgeBaseExists implements service.AgentTx, over the knowledge bases' table.
func (t *tx) KnowledgeBaseExists(ws, id string) (bool, error) {
	var found bool
	err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM knowledge_bases WHERE id = $1 AND workspace_id = $2)`, id, ws).Scan(&found)
	return found, err
}

// AgentsUsingKnowledgeBase implements service.AgentTx: the rows its delete's cascade
// (removeKnowledgeBaseFromAgents) rewrites, and the agents a version of which names it.
func (t *tx) AgentsUsingKnowledgeBase(ws, kbID string) ([]string, error) {
	rows, err := t.query(`SELECT a.id FROM agents a WHERE a.workspace_id = $1 AND (a.config->'llm_config'->'knowledge_base_ids' ? $2
		OR EXISTS (SELECT 1 FROM agent_versions v WHERE v.agent_id = a.id AND v.config->'llm_config'->'knowledge_base_ids' ? $2))`, ws, kbID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// AgentRef implements service.NumberTx.
func (t *tx) AgentRef(ws, agentID string) (bool, *int, error) {
	var published *int
	err := t.queryRow(`SELECT published_version FROM agents WHERE id = $1 AND workspace_id = $2`, agentID, ws).Scan(&published)
	if err != nil {
		return false, nil, noRows(err)
	}
	return true, published, nil
}

// deleteWorkspaceAgents is the agents' part of deleting a workspace: agents and their
// versions (members and numbers go with the workspace, so no hook needs to run).
func deleteWorkspaceAgents(t *tx, ws string) error {
	if _, err := t.exec(`DELETE FROM agent_versions WHERE agent_id IN (SELECT id FROM agents WHERE workspace_id = $1)`, ws); err != nil {
		return err
	}
	_, err := t.exec(`DELETE FROM agents WHERE workspace_id = $1`, ws)
	return err
}

// removeKnowledgeBaseFromAgents drops a deleted knowledge base from the knowledge_base_ids
// of the workspace's agents, in the knowledge base's delete transaction; each changed row
// gets a new revision. Versions keep their snapshot as published.
func removeKnowledgeBaseFromAgents(t *tx, ws, kbID string) error {
	_, err := t.exec(`UPDATE agents SET
			config = jsonb_set(config, '{llm_config,knowledge_base_ids}', (
				SELECT coalesce(jsonb_agg(e ORDER BY i), '[]'::jsonb)
				FROM jsonb_array_elements(config->'llm_config'->'knowledge_base_ids') WITH ORDINALITY AS ids(e, i)
				WHERE e <> to_jsonb($2::text))),
			revision = nextval('agent_revisions')
		WHERE workspace_id = $1 AND config->'llm_config'->'knowledge_base_ids' ? $2`, ws, kbID)
	return err
}

// countWhereUpTo counts the rows of from (a "table WHERE condition" using args), stopping at
// upTo when upTo >= 0, so that a quota check reads no more rows than its limit.
func (t *tx) countWhereUpTo(from string, upTo int64, args ...any) (int64, error) {
	sql := `SELECT count(*) FROM ` + from
	if upTo >= 0 {
		sql = fmt.Sprintf(`SELECT count(*) FROM (SELECT 1 FROM %s LIMIT %d) AS limited`, from, upTo)
	}
	var n int64
	err := t.queryRow(sql, args...).Scan(&n)
	return n, err
}

// storedTime is a stored timestamp as the records carry it: UTC.
func storedTime(t time.Time) data.Time { return data.Time{Time: t.UTC()} }

func storedTimePtr(t *time.Time) *data.Time {
	if t == nil {
		return nil
	}
	d := storedTime(*t)
	return &d
}

// paramTime is a nullable timestamp parameter.
func paramTime(t *data.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

// AgentsToSeal implements service.AgentTx (migration 0028's list).
func (t *tx) AgentsToSeal(ws string, limit int) ([]string, error) {
	rows, err := t.query(`SELECT agent_id FROM agents_to_seal WHERE workspace_id = $1
		ORDER BY agent_id LIMIT $2`, ws, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// AgentSealed implements service.AgentTx.
func (t *tx) AgentSealed(ws, id string) error {
	_, err := t.exec(`DELETE FROM agents_to_seal WHERE workspace_id = $1 AND agent_id = $2`, ws, id)
	return err
}

// ListAgentToSeal implements service.AgentTx.
func (t *tx) ListAgentToSeal(ws, id string) error {
	_, err := t.exec(`INSERT INTO agents_to_seal (workspace_id, agent_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, ws, id)
	return err
}
