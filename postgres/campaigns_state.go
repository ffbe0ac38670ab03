package postgres

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Recipients implements service.CampaignTx: the whole campaign through
// campaign_recipients_by_campaign, or the selected states through
// campaign_recipients_by_state (migration 0034).
func (t *tx) Recipients(campaignID string, sel service.StateSelection, req data.PageRequest) ([]*data.Recipient, data.Page, error) {
	ks := keyset{binding: binding("campaign_recipients", campaignID), cols: "body, id", key: "id",
		from: `campaign_recipients WHERE campaign_id = $1`, args: []any{campaignID}}
	if sel.Filter != "" {
		ks.binding = binding("campaign_recipients", campaignID, "state="+sel.Filter)
		ks.from, ks.args = recipientStatesFrom(campaignID, sel.States)
	}
	return pageRows(t, ks, req, func(rows pgx.Rows) (*data.Recipient, string, error) {
		var body []byte
		var id string
		if err := rows.Scan(&body, &id); err != nil {
			return nil, "", err
		}
		var r data.Recipient
		if err := data.DecodeJSON(body, &r); err != nil {
			return nil, "", err
		}
		return &r, id, nil
	})
}

// recipientStatesFrom is a keyset's "table WHERE condition" over the campaign's
// recipients in states. Several states are one branch each, UNION ALL: each branch reads
// its state's rows in id order through the index, and the planner merges them (Merge
// Append) up to the page's limit; one "state = ANY" condition would read every row of
// those states to sort them.
func recipientStatesFrom(campaignID string, states []string) (string, []any) {
	args := []any{campaignID}
	switch len(states) {
	case 0:
		return `campaign_recipients WHERE campaign_id = $1 AND false`, args
	case 1:
		return `campaign_recipients WHERE campaign_id = $1 AND state = $2`, append(args, states[0])
	}
	branches := make([]string, 0, len(states))
	for _, s := range states {
		args = append(args, s)
		branches = append(branches, fmt.Sprintf(`SELECT body, id FROM campaign_recipients WHERE campaign_id = $1 AND state = $%d`, len(args)))
	}
	return `(` + strings.Join(branches, ` UNION ALL `) + `) r WHERE true`, args
}
