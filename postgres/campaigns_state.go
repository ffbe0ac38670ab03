package postgres

import (
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Recipients implements service.CampaignTx: the whole campaign through
// campaign_recipients_by_campaign, or each selected state through
// campaign_recipients_by_state (migration 0034); several states are read apart and
// merged here (recipientsMerged).
func (t *tx) Recipients(campaignID string, sel service.StateSelection, req data.PageRequest) ([]*data.Recipient, data.Page, error) {
	if len(sel.States) > 1 {
		return t.recipientsMerged(campaignID, sel, req)
	}
	return pageRows(t, recipientKeyset(campaignID, sel), req, scanRecipientPage)
}

// scanRecipientPage reads a recipient row of a page and its key.
func scanRecipientPage(rows pgx.Rows) (*data.Recipient, string, error) {
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
}

// recipientKeyset is the keyset of the campaign's recipients sel selects. Its binding
// names the filter, not the states, so a state's own keyset reads the same cursors.
// Unfiltered, the campaign is compared as a range (keyset.within), in the order of
// campaign_recipients_by_campaign: a generic plan otherwise walked the primary key past
// other campaigns' recipients (TestScopedListsSeekTheScope).
func recipientKeyset(campaignID string, sel service.StateSelection) keyset {
	ks := keyset{binding: binding("campaign_recipients", campaignID), cols: "body, id", key: "id",
		from: `campaign_recipients WHERE campaign_id = $1`, args: []any{campaignID}}
	if sel.Filter == "" {
		ks.from, ks.within = `campaign_recipients WHERE campaign_id >= $1 AND campaign_id <= $1`, "campaign_id"
		return ks
	}
	ks.binding = binding("campaign_recipients", campaignID, "state="+sel.Filter)
	switch len(sel.States) {
	case 0:
		ks.from += ` AND false`
	case 1:
		ks.from, ks.args = ks.from+` AND state >= $2 AND state <= $2`, append(ks.args, sel.States[0])
		ks.within = "state"
	default: // read apart and merged (recipientsMerged); ks names the list in its cursors
		for _, state := range sel.States {
			ks.union = append(ks.union, recipientKeyset(campaignID, service.StateSelection{Filter: sel.Filter, States: []string{state}}))
		}
	}
	return ks
}

// recipientsMerged is a page of several states (a canceled campaign's canceled: its
// stored canceled and pending recipients): each state's page read through its index,
// per_page+1 rows at most, merged by id. One query over the states would sort every
// row of them: the planner merges no ordered reads of them (checked on PostgreSQL 15,
// UNION ALL branches included: an Append, then a sort).
func (t *tx) recipientsMerged(campaignID string, sel service.StateSelection, req data.PageRequest) ([]*data.Recipient, data.Page, error) {
	ks := recipientKeyset(campaignID, sel)
	q, err := t.pageQuery(ks, req) // its page size, direction and cursor; each state's statement is its own
	meta := data.Page{PerPage: q.perPage}
	if err != nil {
		return nil, meta, err
	}
	type row struct {
		r  *data.Recipient
		id string
	}
	var merged []row
	for _, state := range ks.union {
		one, err := t.pageQuery(state, req)
		if err != nil {
			return nil, meta, err
		}
		rows, err := t.query(one.sql, one.args...)
		if err != nil {
			return nil, meta, err
		}
		for rows.Next() {
			r, id, err := scanRecipientPage(rows)
			if err != nil {
				rows.Close()
				return nil, meta, err
			}
			merged = append(merged, row{r, id})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, meta, err
		}
	}
	// In the walk's direction, nearest the cursor first, as each state's rows came.
	slices.SortFunc(merged, func(a, b row) int {
		if q.dir == newer {
			return strings.Compare(a.id, b.id)
		}
		return strings.Compare(b.id, a.id)
	})
	more := len(merged) > q.perPage
	if more {
		merged = merged[:q.perPage]
	}
	if q.dir == newer {
		reverse(merged)
	}
	list, keys := make([]*data.Recipient, len(merged)), make([]string, len(merged))
	for i, m := range merged {
		list[i], keys[i] = m.r, m.id
	}
	if err := t.pageCursors(ks, q, more, keys, &meta); err != nil {
		return nil, meta, err
	}
	return list, meta, nil
}
