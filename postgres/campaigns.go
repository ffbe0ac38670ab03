package postgres

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
	"github.com/voiceapi/voiceapi/service"
)

// Campaigns and their recipients (service.CampaignTx, migration 0016). Each record is
// kept whole in body; the columns beside it serve the indexes a claim and a call's end
// read. A claim runs under its workspace's lock (locks.go), so two claims of one
// workspace, on any replica, take turns; SERIALIZABLE keeps a call's end and a claim
// from both moving one recipient.

func init() {
	workspaceCascades = append(workspaceCascades, func(t *tx, ws string) error {
		for _, table := range []string{"campaign_recipients", "campaigns", "campaigns_deleting", "campaign_kept_counts", "suppressions", "suppression_counts"} {
			if _, err := t.exec(`DELETE FROM `+table+` WHERE workspace_id = $1`, ws); err != nil {
				return err
			}
		}
		return nil
	})
}

func scanCampaign(row pgx.Row) (*data.Campaign, error) {
	var body []byte
	var last *time.Time
	if err := row.Scan(&body, &last); err != nil {
		return nil, err
	}
	var c data.Campaign
	if err := data.DecodeJSON(body, &c); err != nil {
		return nil, fmt.Errorf("decoding a campaign: %w", err)
	}
	c.LastClaimAt = storedTimePtr(last)
	return &c, nil
}

func scanRecipient(row pgx.Row) (*data.Recipient, error) {
	var body []byte
	if err := row.Scan(&body); err != nil {
		return nil, err
	}
	var r data.Recipient
	if err := data.DecodeJSON(body, &r); err != nil {
		return nil, fmt.Errorf("decoding a recipient: %w", err)
	}
	return &r, nil
}

// timeOf is a nullable time column's value.
func timeOf(t *data.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

// InsertCampaign implements service.CampaignTx: the recipients are copied in (COPY), a
// campaign of 100,000 in one statement.
func (t *tx) InsertCampaign(c *data.Campaign, recipients []*data.Recipient) error {
	body, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if _, err := t.exec(`INSERT INTO campaigns (id, workspace_id, agent_id, status, last_claim_at, body)
		VALUES ($1, $2, $3, $4, $5, $6)`, c.ID, c.WorkspaceID, c.AgentID, c.Status, timeOf(c.LastClaimAt), body); err != nil {
		return err
	}
	if err := t.moveKept(c.WorkspaceID, c.KeptWeight()); err != nil {
		return err
	}
	rows := make([][]any, len(recipients))
	for i, r := range recipients {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		rows[i] = []any{r.ID, r.CampaignID, r.WorkspaceID, r.State, timeOf(r.NextAt), timeOf(r.LeaseUntil), r.CallID, b}
	}
	_, err = t.copyFrom(pgx.Identifier{"campaign_recipients"},
		[]string{"id", "campaign_id", "workspace_id", "state", "next_at", "lease_until", "call_id", "body"}, pgx.CopyFromRows(rows))
	return err
}

// Campaign implements service.CampaignTx.
func (t *tx) Campaign(id string) (*data.Campaign, error) {
	c, err := scanCampaign(t.queryRow(`SELECT body, last_claim_at FROM campaigns WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return c, nil
}

// PutCampaign implements service.CampaignTx.
func (t *tx) PutCampaign(c *data.Campaign) error {
	body, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = t.exec(`UPDATE campaigns SET status = $2, last_claim_at = $3, body = $4 WHERE id = $1`,
		c.ID, c.Status, timeOf(c.LastClaimAt), body)
	return err
}

// Campaigns implements service.CampaignTx.
func (t *tx) Campaigns(ws string, f data.CampaignFilter, agentIDs []string, req data.PageRequest) ([]*data.Campaign, data.Page, error) {
	return pageRows(t, campaignPageList(ws, f, agentIDs), req, func(rows pgx.Rows) (*data.Campaign, string, error) {
		var body []byte
		var last *time.Time
		var id string
		if err := rows.Scan(&body, &last, &id); err != nil {
			return nil, "", err
		}
		var c data.Campaign
		if err := data.DecodeJSON(body, &c); err != nil {
			return nil, "", err
		}
		c.LastClaimAt = storedTimePtr(last)
		return &c, id, nil
	})
}

// campaignPageList is the keyset of a campaign list.
func campaignPageList(ws string, f data.CampaignFilter, agentIDs []string) keyset {
	ks := keyset{binding: pagecursor.BindAgents(binding("campaigns", ws, f.AgentID, f.Status), agentIDs), cols: "body, last_claim_at, id", key: "id",
		args: []any{ws}}
	open := []string{data.CampaignScheduled, data.CampaignRunning, data.CampaignPaused}
	final := f.Status != "" && !slices.Contains(open, f.Status)
	switch {
	case final && f.AgentID == "" && agentIDs == nil:
		// Every agent's campaigns of a final status: campaigns_by_status (migration 0046),
		// the status compared as a range (keyset.within), so that the scan ends where the
		// status's campaigns do. Through campaigns_by_workspace a page of canceled campaigns
		// passed over every completed one (TestWorkspaceListPagesStopAtTheirScope).
		ks.from, ks.within = `campaigns WHERE workspace_id = $1 AND status >= $2 AND status <= $2`, "status"
		ks.args = append(ks.args, f.Status)
	case final:
		// An agent's or a caller's agents' campaigns of a final status: their agents as
		// narrowByAgent reads them, each pinned, with the status an equality after it in
		// campaigns_by_agent_status (migration 0046), so that the scan ends where the
		// agent's campaigns of the status do; through campaigns_by_agent it passed over the
		// agent's campaigns of the other statuses (TestWorkspaceListPagesStopAtTheirScope).
		ks.narrowByAgent("campaigns", f.AgentID, "", agentIDs, open...)
		if ks.within == "agent_id" { // one agent, $2: pinned in order, so the status bounds the scan
			ks.from = `campaigns WHERE workspace_id = $1 AND ` + pinnedInOrder("agent_id", "$2")
		}
		ks.args = append(ks.args, f.Status)
		ks.from += fmt.Sprintf(` AND status = $%d`, len(ks.args))
	default:
		ks.narrowByAgent("campaigns", f.AgentID, f.Status, agentIDs, open...)
	}
	return ks
}

// campaignOpen is the predicate of the index campaigns_open (migration 0022), written
// the same so that the planner can use it: not final, or final with recipients still in
// progress (a claim returns their leases when they run out).
const campaignOpen = `(status IN ('scheduled', 'running', 'paused') OR (body #>> '{counts,in_progress}')::bigint > 0)`

// OpenCampaigns implements service.CampaignTx.
func (t *tx) OpenCampaigns(ws string) ([]*data.Campaign, error) {
	rows, err := t.query(`SELECT body, last_claim_at FROM campaigns
		WHERE workspace_id = $1 AND `+campaignOpen+` ORDER BY id`, ws)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*data.Campaign
	for rows.Next() {
		c, err := scanCampaign(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// AgentCampaigns implements service.CampaignTx.
func (t *tx) AgentCampaigns(ws, agentID string) ([]string, error) {
	rows, err := t.query(`SELECT id FROM campaigns WHERE workspace_id = $1 AND agent_id = $2
		AND `+campaignOpen+` ORDER BY id`, ws, agentID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Recipient implements service.CampaignTx.
func (t *tx) Recipient(id string) (*data.Recipient, error) {
	r, err := scanRecipient(t.queryRow(`SELECT body FROM campaign_recipients WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return r, nil
}

// PutRecipient implements service.CampaignTx: the columns follow the record.
func (t *tx) PutRecipient(_, r *data.Recipient) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var callID *string
	if r.State == data.RecipientInProgress {
		callID = r.CallID
	}
	_, err = t.exec(`UPDATE campaign_recipients SET state = $2, next_at = $3, lease_until = $4, call_id = $5, body = $6
		WHERE id = $1`, r.ID, r.State, timeOf(r.NextAt), timeOf(r.LeaseUntil), callID, body)
	return err
}

// DueRecipients implements service.CampaignTx.
func (t *tx) DueRecipients(campaignID string, now time.Time, limit int) ([]*data.Recipient, error) {
	return t.recipientsWhere(`state = 'pending' AND next_at <= $2 ORDER BY next_at, id LIMIT $3`, campaignID, now, limit)
}

// ExpiredLeases implements service.CampaignTx.
func (t *tx) ExpiredLeases(campaignID string, now time.Time, limit int) ([]*data.Recipient, error) {
	return t.recipientsWhere(`state = 'in_progress' AND lease_until < $2 ORDER BY lease_until, id LIMIT $3`, campaignID, now, limit)
}

func (t *tx) recipientsWhere(cond string, campaignID string, now time.Time, limit int) ([]*data.Recipient, error) {
	rows, err := t.query(`SELECT body FROM campaign_recipients WHERE campaign_id = $1 AND `+cond, campaignID, now, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*data.Recipient
	for rows.Next() {
		r, err := scanRecipient(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// NextDue implements service.CampaignTx.
func (t *tx) NextDue(campaignID string) (time.Time, error) {
	var at *time.Time
	err := t.queryRow(`SELECT min(next_at) FROM campaign_recipients WHERE campaign_id = $1 AND state = 'pending'`, campaignID).Scan(&at)
	if err != nil || at == nil {
		return time.Time{}, err
	}
	return at.UTC(), nil
}

// RecipientByCall implements service.CampaignTx.
func (t *tx) RecipientByCall(callID string) (*data.Recipient, error) {
	r, err := scanRecipient(t.queryRow(`SELECT body FROM campaign_recipients WHERE call_id = $1 AND state = 'in_progress'`, callID))
	if err != nil {
		return nil, noRows(err)
	}
	return r, nil
}

// DeleteCampaign implements service.CampaignTx.
func (t *tx) DeleteCampaign(c *data.Campaign) error {
	if _, err := t.exec(`DELETE FROM campaigns WHERE id = $1`, c.ID); err != nil {
		return err
	}
	if _, err := t.exec(`INSERT INTO campaigns_deleting (campaign_id, workspace_id, agent_id) VALUES ($1, $2, $3)
		ON CONFLICT (campaign_id) DO NOTHING`, c.ID, c.WorkspaceID, c.AgentID); err != nil {
		return err
	}
	return t.moveKept(c.WorkspaceID, -c.KeptWeight())
}

// campaignLockSpace is the first key of the advisory locks under which a deleted
// campaign's batches take turns ("vcmp"; the workspaces' locks are lockSpace's).
const campaignLockSpace int32 = 0x76636d70

// DeleteCampaignRecipients implements service.CampaignTx: any limit of the campaign's
// recipients, in no order, so that a batch reads no more of them than it deletes (with
// ORDER BY id the planner sorted the whole campaign each batch: 0.1 s of 100,000).
//
// A batch that is its transaction's first statement (the delete job's) runs READ
// COMMITTED: at SERIALIZABLE its read of 1,000 rows, some 84 heap pages, is promoted to a
// predicate lock on the whole table (past max_pred_locks_per_relation's 32 pages), and
// two workspaces' delete jobs at once failed to serialize one batch in four
// (docs/performance.md, "Deleting a campaign"). No rule reads a deleted campaign's
// recipients. The campaign's batches take turns under a transaction lock, so that a
// batch's count, whose shortfall ends the job, never comes short because a second runner
// of the job (its lease taken over) deleted the same rows meanwhile.
func (t *tx) DeleteCampaignRecipients(campaignID string, limit int) (int, error) {
	if t.w != nil && !t.w.begun {
		t.w.level = pgx.ReadCommitted
		// With the SERIALIZABLE writes' plan settings (indexPlansSQL), so that the batch
		// plans as it was measured: never a sequential scan of every campaign's recipients.
		if _, err := t.exec(`SELECT pg_advisory_xact_lock($1, $2), `+indexPlanSettings,
			campaignLockSpace, workspaceKey(campaignID)); err != nil {
			return 0, err
		}
	}
	tag, err := t.exec(`DELETE FROM campaign_recipients WHERE id IN (
		SELECT id FROM campaign_recipients WHERE campaign_id = $1 LIMIT $2)`, campaignID, limit)
	if err != nil || int(tag.RowsAffected()) == limit {
		return int(tag.RowsAffected()), err
	}
	_, err = t.exec(`DELETE FROM campaigns_deleting WHERE campaign_id = $1`, campaignID) // none left
	return int(tag.RowsAffected()), err
}

// DeletingCampaigns implements service.CampaignTx from campaigns_deleting (migration
// 0029).
func (t *tx) DeletingCampaigns(after string, limit int) ([]service.DeletingCampaign, error) {
	rows, err := t.query(`SELECT campaign_id, workspace_id, agent_id FROM campaigns_deleting
		WHERE campaign_id > $1 ORDER BY campaign_id LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []service.DeletingCampaign
	for rows.Next() {
		var c service.DeletingCampaign
		if err := rows.Scan(&c.ID, &c.WorkspaceID, &c.AgentID); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// KeptCampaignRecipients implements service.CampaignTx from the kept count (migration
// 0026), under the workspace's lock as CountSuppressions reads its count.
func (t *tx) KeptCampaignRecipients(ws string) (int64, error) {
	if err := t.lockWorkspace(ws); err != nil {
		return 0, err
	}
	var n int64
	err := t.queryRow(`SELECT n FROM campaign_kept_counts WHERE workspace_id = $1`, ws).Scan(&n)
	return n, noRows(err)
}

// moveKept adds by to the workspace's kept count, under its lock.
func (t *tx) moveKept(ws string, by int64) error {
	if err := t.lockWorkspace(ws); err != nil {
		return err
	}
	_, err := t.exec(`INSERT INTO campaign_kept_counts (workspace_id, n) VALUES ($1, greatest($2::bigint, 0))
		ON CONFLICT (workspace_id) DO UPDATE SET n = greatest(campaign_kept_counts.n + $2::bigint, 0)`, ws, by)
	return err
}

// InsertSuppressions implements service.CampaignTx: one statement for the whole list,
// which adds to each workspace's count the numbers it added; a number listed already (in
// this workspace) is left out. The counts' rows are the workspaces' (locked first).
func (t *tx) InsertSuppressions(list []*data.Suppression) ([]bool, error) {
	ids, wss, phones, reasons, created := make([]string, len(list)), make([]string, len(list)), make([]string, len(list)),
		make([]*string, len(list)), make([]time.Time, len(list))
	for i, s := range list {
		ids[i], wss[i], phones[i], reasons[i], created[i] = s.ID, s.WorkspaceID, s.PhoneNumber, s.Reason, s.CreatedAt.Time
		if err := t.lockWorkspace(s.WorkspaceID); err != nil {
			return nil, err
		}
	}
	rows, err := t.query(`WITH added AS (
			INSERT INTO suppressions (id, workspace_id, phone_number, reason, created_at)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
			ON CONFLICT (workspace_id, phone_number) DO NOTHING RETURNING id, workspace_id),
		counted AS (
			INSERT INTO suppression_counts (workspace_id, n) SELECT workspace_id, count(*) FROM added GROUP BY workspace_id
			ON CONFLICT (workspace_id) DO UPDATE SET n = suppression_counts.n + excluded.n)
		SELECT id FROM added`, ids, wss, phones, reasons, created)
	if err != nil {
		return nil, err
	}
	added, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	in := make(map[string]bool, len(added))
	for _, id := range added {
		in[id] = true
	}
	out := make([]bool, len(list))
	for i, s := range list {
		out[i] = in[s.ID]
	}
	return out, nil
}

// CountSuppressions implements service.CampaignTx from the kept count. A write takes the
// workspace's lock first (locks.go), so writers of one list take turns on its count
// rather than fail to serialize.
func (t *tx) CountSuppressions(ws string) (int, error) {
	if err := t.lockWorkspace(ws); err != nil {
		return 0, err
	}
	var n int64
	err := t.queryRow(`SELECT n FROM suppression_counts WHERE workspace_id = $1`, ws).Scan(&n)
	return int(n), noRows(err)
}

const suppressionCols = `id, workspace_id, phone_number, reason, created_at`

func scanSuppression(row pgx.Row) (*data.Suppression, error) {
	var s data.Suppression
	var created time.Time
	if err := row.Scan(&s.ID, &s.WorkspaceID, &s.PhoneNumber, &s.Reason, &created); err != nil {
		return nil, err
	}
	s.CreatedAt = storedTime(created)
	return &s, nil
}

// SuppressionByPhone implements service.CampaignTx.
func (t *tx) SuppressionByPhone(ws, phone string) (*data.Suppression, error) {
	s, err := scanSuppression(t.queryRow(`SELECT `+suppressionCols+` FROM suppressions WHERE workspace_id = $1 AND phone_number = $2`, ws, phone))
	if err != nil {
		return nil, noRows(err)
	}
	return s, nil
}

// SuppressedAmong implements service.CampaignTx.
func (t *tx) SuppressedAmong(ws string, phones []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(phones) == 0 {
		return out, nil
	}
	rows, err := t.query(`SELECT phone_number FROM suppressions WHERE workspace_id = $1 AND phone_number = ANY($2)`, ws, phones)
	if err != nil {
		return nil, err
	}
	listed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, p := range listed {
		out[p] = true
	}
	return out, err
}

// Suppression implements service.CampaignTx.
func (t *tx) Suppression(id string) (*data.Suppression, error) {
	s, err := scanSuppression(t.queryRow(`SELECT `+suppressionCols+` FROM suppressions WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return s, nil
}

// suppressionList is the keyset of a workspace's suppressions.
func suppressionList(ws string) keyset {
	return inWorkspace("suppressions", suppressionCols, ws)
}

// Suppressions implements service.CampaignTx.
func (t *tx) Suppressions(ws string, req data.PageRequest) ([]*data.Suppression, data.Page, error) {
	ks := suppressionList(ws)
	return pageRows(t, ks, req, func(rows pgx.Rows) (*data.Suppression, string, error) {
		s, err := scanSuppression(rows)
		if err != nil {
			return nil, "", err
		}
		return s, s.ID, nil
	})
}

// DeleteSuppression implements service.CampaignTx, and takes the entry off its
// workspace's count.
func (t *tx) DeleteSuppression(s *data.Suppression) error {
	if err := t.lockWorkspace(s.WorkspaceID); err != nil {
		return err
	}
	_, err := t.exec(`WITH gone AS (DELETE FROM suppressions WHERE id = $1 RETURNING workspace_id)
		UPDATE suppression_counts c SET n = c.n - 1 FROM gone WHERE c.workspace_id = gone.workspace_id`, s.ID)
	return err
}
