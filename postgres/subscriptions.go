package postgres

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// SubscriptionPlan implements service.LimitTx.
func (t *tx) SubscriptionPlan(workspaceID string) (*data.SubscriptionPlan, error) {
	var p data.SubscriptionPlan
	var limits []byte
	var updated time.Time
	err := t.queryRow(`SELECT plan, status, limits, updated_at FROM subscription_plans WHERE workspace_id = $1`, workspaceID).
		Scan(&p.Plan, &p.Status, &limits, &updated)
	if err != nil {
		return nil, noRows(err)
	}
	if err := data.DecodeJSON(limits, &p.Limits); err != nil {
		return nil, err
	}
	if p.Limits == nil {
		p.Limits = map[string]int64{}
	}
	p.UpdatedAt = data.NewTime(updated)
	return &p, nil
}

// PutSubscriptionPlan implements service.SubscriptionTx.
func (t *tx) PutSubscriptionPlan(workspaceID string, p *data.SubscriptionPlan) error {
	limits := p.Limits
	if limits == nil {
		limits = map[string]int64{}
	}
	raw, err := json.Marshal(limits)
	if err != nil {
		return err
	}
	_, err = t.exec(`INSERT INTO subscription_plans (workspace_id, plan, status, limits, updated_at)
		VALUES ($1, $2, $3, $4::jsonb, $5)
		ON CONFLICT (workspace_id) DO UPDATE SET plan = excluded.plan, status = excluded.status,
			limits = excluded.limits, updated_at = excluded.updated_at`,
		workspaceID, p.Plan, p.Status, string(raw), p.UpdatedAt.Time)
	return err
}

// WorkspaceExists implements service.SubscriptionTx.
func (t *tx) WorkspaceExists(workspaceID string) (bool, error) {
	var found bool
	err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM workspaces WHERE id = $1)`, workspaceID).Scan(&found)
	return found, err
}

// CountUpTo implements service.LimitTx through the counters each resource registered in
// quotaCounters. A kind nobody registered counts none, as in the bbolt engine.
func (t *tx) CountUpTo(kind, workspaceID string, upTo int64) (int64, error) {
	count, ok := quotaCounters[kind]
	if !ok {
		return 0, nil
	}
	return count(t, workspaceID, upTo)
}

// countRowsUpTo counts the rows query selects (a SELECT with no LIMIT, its arguments
// args), stopping at upTo when upTo >= 0: a quota check needs no more, so a workspace's
// count costs at most its limit's index entries. Counters use it over an index on the
// workspace.
func (t *tx) countRowsUpTo(query string, upTo int64, args ...any) (int64, error) {
	var limit any // NULL: LIMIT ALL
	if upTo >= 0 {
		limit = upTo
	}
	args = append(args, limit)
	var n int64
	err := t.queryRow(`SELECT count(*) FROM (`+query+` LIMIT $`+strconv.Itoa(len(args))+`) AS counted`, args...).Scan(&n)
	return n, err
}
