package postgres

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

func init() {
	workspaceCascades = append(workspaceCascades, deleteWorkspacePlan)
}

// workspaceCols are the columns scanWorkspace reads, in its order.
const workspaceCols = `id, name, description, coalesce(personal_of, ''), privacy, embeddings, embeddings_key, simulation, created_at, updated_at`

func scanWorkspace(row pgx.Row) (*data.WorkspaceRecord, error) {
	var w data.WorkspaceRecord
	var created, updated time.Time
	var privacy, embeddings, simulation []byte
	if err := row.Scan(&w.ID, &w.Name, &w.Description, &w.PersonalOf, &privacy, &embeddings, &w.EmbeddingsKey, &simulation, &created, &updated); err != nil {
		return nil, err
	}
	if err := data.DecodeJSON(privacy, &w.Privacy); err != nil {
		return nil, fmt.Errorf("workspace %s: privacy: %w", w.ID, err)
	}
	if err := data.DecodeJSON(embeddings, &w.Embeddings); err != nil {
		return nil, fmt.Errorf("workspace %s: embeddings: %w", w.ID, err)
	}
	if simulation != nil {
		if err := data.DecodeJSON(simulation, &w.Simulation); err != nil {
			return nil, fmt.Errorf("workspace %s: simulation: %w", w.ID, err)
		}
	}
	w.CreatedAt, w.UpdatedAt = data.NewTime(created), data.NewTime(updated)
	return &w, nil
}

// Workspace implements service.AccountTx.
func (t *tx) Workspace(id string) (*data.WorkspaceRecord, error) {
	w, err := scanWorkspace(t.queryRow(`SELECT `+workspaceCols+` FROM workspaces WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return w, nil
}

// PutWorkspace implements service.AccountTx.
func (t *tx) PutWorkspace(w *data.WorkspaceRecord) error {
	privacy, err := json.Marshal(w.Privacy)
	if err != nil {
		return err
	}
	embeddings, err := json.Marshal(w.Embeddings)
	if err != nil {
		return err
	}
	var simulation []byte // NULL: each agent's own model
	if w.Simulation != nil {
		if simulation, err = json.Marshal(w.Simulation); err != nil {
			return err
		}
	}
	_, err = t.exec(`INSERT INTO workspaces (id, name, description, personal_of, privacy, embeddings, embeddings_key, simulation, created_at, updated_at)
		VALUES ($1, $2, $3, NULLIF($4, ''), $5, $6, $7, $8, $9, $10)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, description = excluded.description,
			personal_of = excluded.personal_of, privacy = excluded.privacy, embeddings = excluded.embeddings,
			embeddings_key = excluded.embeddings_key, simulation = excluded.simulation,
			created_at = excluded.created_at, updated_at = excluded.updated_at`,
		w.ID, w.Name, w.Description, w.PersonalOf, privacy, embeddings, w.EmbeddingsKey, simulation, w.CreatedAt.Time, w.UpdatedAt.Time)
	return err
}

// DeleteWorkspace implements service.AccountTx: each resource's records (the cascades
// the resources registered), then the members, the tokens bound to the workspace (the
// service took what they kept under Idempotency-Keys first), its events and chain head,
// and the workspace.
func (t *tx) DeleteWorkspace(id string) error {
	if err := t.lockWorkspace(id); err != nil {
		return err
	}
	for _, cascade := range workspaceCascades {
		if err := cascade(t, id); err != nil {
			return err
		}
	}
	for _, sql := range []string{
		`DELETE FROM members WHERE workspace_id = $1`,
		`DELETE FROM api_keys WHERE workspace_id = $1`,
		`DELETE FROM idempotency_starts_to_note WHERE workspace_id = $1`,
		// Events, their outbox entries and the chain head went with the cascades
		// (deleteWorkspaceEvents): the outbox has no foreign key to events, so events
		// deleted here alone would leave their entries behind.
		`DELETE FROM workspaces WHERE id = $1`,
	} {
		if _, err := t.exec(sql, id); err != nil {
			return err
		}
	}
	return nil
}

// WorkspacePage implements service.AccountTx: the user's memberships, newest workspace
// first, joined to their workspaces.
func (t *tx) WorkspacePage(userID string, req data.PageRequest) ([]*data.WorkspaceRecord, data.Page, error) {
	return pageRows(t, workspaceList(userID), req, func(rows pgx.Rows) (*data.WorkspaceRecord, string, error) {
		w, err := scanWorkspace(rows)
		if err != nil {
			return nil, "", err
		}
		return w, w.ID, nil
	})
}

// workspaceList is the keyset of a user's workspaces, in the order of members_by_user,
// the user compared as a range (keyset.within): a generic plan otherwise walked the
// primary key (workspace_id, user_id) past other users' memberships
// (TestScopedListsSeekTheScope).
func workspaceList(userID string) keyset {
	return keyset{
		binding: binding("workspaces", userID),
		cols:    `w.id, w.name, w.description, coalesce(w.personal_of, ''), w.privacy, w.embeddings, w.embeddings_key, w.simulation, w.created_at, w.updated_at`,
		from:    `members m JOIN workspaces w ON w.id = m.workspace_id WHERE m.user_id >= $1 AND m.user_id <= $1`,
		key:     "m.workspace_id",
		within:  "m.user_id",
		args:    []any{userID},
	}
}

// AllWorkspaces implements service.AccountTx.
func (t *tx) AllWorkspaces() ([]*data.WorkspaceRecord, error) {
	rows, err := t.query(`SELECT ` + workspaceCols + ` FROM workspaces ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*data.WorkspaceRecord, error) { return scanWorkspace(row) })
}

// deleteWorkspacePlan removes a deleted workspace's subscription plan (a cascade).
func deleteWorkspacePlan(t *tx, workspaceID string) error {
	_, err := t.exec(`DELETE FROM subscription_plans WHERE workspace_id = $1`, workspaceID)
	return err
}
