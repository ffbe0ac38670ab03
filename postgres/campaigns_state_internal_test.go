package postgres

import (
	"context"
	"crypto/rand"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestRecipientStatePageReadsItsIndex: a recipient page filtered on a state reads
// per_page+1 rows of campaign_recipients_by_state (migration 0034), none passed over,
// even when the state's recipients are the campaign's oldest. Without the index the
// page walks campaign_recipients_by_campaign and passes over the newer recipients of
// other states.
func TestRecipientStatePageReadsItsIndex(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	g := &data.IDGen{Now: func() time.Time { at = at.Add(time.Millisecond); return at }, Rand: rand.Reader} // ids in creation order
	c := &data.Campaign{ID: g.New(data.PrefixCampaign), WorkspaceID: "ws_1", Name: "C", AgentID: "agt_1", Status: data.CampaignCanceled}
	var rs []*data.Recipient
	for i := range 3000 {
		state := data.RecipientCompleted // the newest: those a walk by id meets first
		switch {
		case i < 1000:
			state = data.RecipientCanceled
		case i < 2000:
			state = data.RecipientPending
		}
		rs = append(rs, &data.Recipient{ID: g.New(data.PrefixRecipient), CampaignID: c.ID, WorkspaceID: c.WorkspaceID,
			PhoneNumber: fmt.Sprintf("+1415555%04d", i), State: state, Attempts: []data.RecipientAttempt{}})
	}
	c.Counts.Total = int64(len(rs))
	if err := db.Update(ctx, func(stx service.Tx) error { return stx.InsertCampaign(c, rs) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`ANALYZE campaign_recipients`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const perPage = 15
	// Each state a filter reads (a canceled campaign's canceled: two, merged in Go) is
	// read so; the first and last of the campaign's recipients, a page of the middle.
	for _, sel := range []service.StateSelection{
		{Filter: data.RecipientCanceled, States: []string{data.RecipientCanceled}},
		{Filter: data.RecipientCanceled, States: []string{data.RecipientPending}},
		{Filter: data.RecipientCompleted, States: []string{data.RecipientCompleted}},
	} {
		ks := recipientKeyset(c.ID, sel)
		middle := db.encodeCursor(older, ks.binding, rs[500].ID) // a page from the middle of the canceled
		plan := recipientPagePlan(t, db, ks, data.PageRequest{PerPage: perPage}) + "\n" +
			recipientPagePlan(t, db, ks, data.PageRequest{PerPage: perPage, Cursor: *middle})
		// A page's cursors ask whether a row is past its edges, read as one entry.
		for _, op := range []string{"<", ">"} {
			plan += "\n" + explain(t, db, func(*tx) (string, []any, error) {
				sql, args := existsQuery(ks, op, rs[500].ID)
				return sql, args, nil
			})
		}
		if !strings.Contains(plan, "campaign_recipients_by_state") {
			t.Errorf("%v: the plan reads no campaign_recipients_by_state:\n%s", sel.States, plan)
		}
		if m := regexp.MustCompile(`Rows Removed by Filter: (\d+)`).FindStringSubmatch(plan); m != nil && m[1] != "0" {
			t.Errorf("%v: the page passed over %s rows of other states:\n%s", sel.States, m[1], plan)
		}
		if strings.Contains(plan, "Sort") {
			t.Errorf("%v: the page sorts the states' rows:\n%s", sel.States, plan)
		}
		for _, m := range regexp.MustCompile(`Index (?:Only )?Scan.*actual rows=(\d+)`).FindAllStringSubmatch(plan, -1) {
			if n, _ := strconv.Atoi(m[1]); n > perPage+1 {
				t.Errorf("%v: an index scan read %d rows for a page of %d:\n%s", sel.States, n, perPage, plan)
			}
		}
	}
}

// recipientPagePlan is EXPLAIN ANALYZE of the statement a page of ks reads.
func recipientPagePlan(t *testing.T, db *DB, ks keyset, req data.PageRequest) string {
	t.Helper()
	return explain(t, db, func(x *tx) (string, []any, error) {
		q, err := x.pageQuery(ks, req)
		return q.sql, q.args, err
	})
}

// explain is EXPLAIN ANALYZE of the statement stmt gives, with sequential and bitmap
// scans off (a table this small is otherwise read whole: the index's plan is the one in
// question).
func explain(t *testing.T, db *DB, stmt func(*tx) (string, []any, error)) string {
	t.Helper()
	var plan []string
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		x := stx.(*tx)
		if _, err := x.exec(`SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)`); err != nil {
			return err
		}
		sql, args, err := stmt(x)
		if err != nil {
			return err
		}
		rows, err := x.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) `+sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			plan = append(plan, line)
		}
		return rows.Err()
	}); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}
