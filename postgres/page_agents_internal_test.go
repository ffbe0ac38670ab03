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

// agentsPageCase is a list read in TestLimitedPagesWalkEachAgent: its keyset, a key of
// its middle, the index its plans must read ("" for the planner's choice), and the most
// rows any step of them may yield or pass over.
type agentsPageCase struct {
	name    string
	ks      keyset
	middle  string
	index   string
	maxRows int
}

// TestLimitedPagesWalkEachAgent: a page for a caller limited to some agents walks each
// agent's rows apart on conversations_by_agent (campaigns_by_agent, migration 0037) and
// reads at most per_page+1 of each, however many rows those agents have: every step of
// the plan yields at most 2 × 16 rows, here among 4,000 of the two agents' (16 for one
// agent's page, the agent_id filter's or a caller's limited to one). With
// "agent_id = ANY(…)" the planner read the agents' rows whole and sorted them. The
// tables are big enough, and analyzed, for the planner's choice to be the real one. A
// status filter is a condition on what the walks meet (for ended, the newer active
// ones); active is read from conversations_open, the partial index of the few active
// ones. Each statement is planned as sent and as the plan the server keeps for it
// (generic: its parameters unknown), which must prove that index's predicate too: with
// status as a parameter, it walked conversations_by_workspace past every ended one.
func TestLimitedPagesWalkEachAgent(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	const ws, n, perPage = "ws_1", 20_000, 15
	at := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	g := &data.IDGen{Now: func() time.Time { at = at.Add(time.Millisecond); return at }, Rand: rand.Reader} // ids in creation order
	var convs, camps []string
	for batch := 0; batch < n; batch += 5000 {
		if err := db.Update(ctx, func(stx service.Tx) error {
			for i := batch; i < batch+5000; i++ {
				c := &data.StoredConversation{Conversation: data.Conversation{ID: g.New(data.PrefixConversation), WorkspaceID: ws,
					AgentID: fmt.Sprintf("agt_%d", i%10), Status: data.ConversationActive, CreatedAt: data.NewTime(at), UpdatedAt: data.NewTime(at)}, StartedBy: "usr_1"}
				if i >= 20 && i < n-20 { // the oldest 20 and the newest 20 active
					endedAt, reason := data.NewTime(at), data.EndUserEnded
					c.Status, c.EndedAt, c.DisconnectionReason = data.ConversationEnded, &endedAt, &reason
				}
				if err := stx.InsertConversation(c, nil); err != nil {
					return err
				}
				convs = append(convs, c.ID)
				if i%4 == 0 { // 5,000 campaigns, the newest 10 running
					status := data.CampaignCompleted
					if i >= n-40 {
						status = data.CampaignRunning
					}
					cp := &data.Campaign{ID: g.New(data.PrefixCampaign), WorkspaceID: ws, Name: "C", AgentID: fmt.Sprintf("agt_%d", i%40/4), Status: status}
					if err := stx.InsertCampaign(cp, nil); err != nil {
						return err
					}
					camps = append(camps, cp.ID)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Update(ctx, func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`ANALYZE conversations; ANALYZE campaigns`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	agents := []string{"agt_1", "agt_2"}
	campaignList := func(f data.CampaignFilter) keyset {
		ks := keyset{binding: "campaigns", cols: "id", key: "id", args: []any{ws}}
		ks.narrowByAgent("campaigns", f.AgentID, f.Status, agents, data.CampaignScheduled, data.CampaignRunning, data.CampaignPaused)
		return ks
	}
	each := 2 * (perPage + 1)
	for _, c := range []agentsPageCase{
		{"conversations", conversationList(ws, data.ConversationFilter{}, agents), convs[n/2], "conversations_by_agent", each},
		{"one agent's conversations", conversationList(ws, data.ConversationFilter{AgentID: "agt_3"}, nil), convs[n/2], "conversations_by_agent", perPage + 1},
		{"conversations of one agent of the caller's", conversationList(ws, data.ConversationFilter{}, agents[:1]), convs[n/2], "conversations_by_agent", perPage + 1},
		{"ended conversations", conversationList(ws, data.ConversationFilter{Status: data.ConversationEnded}, agents), convs[n/2], "conversations_by_agent", each},
		{"active conversations", conversationList(ws, data.ConversationFilter{Status: data.ConversationActive}, agents), convs[n/2], "", 40},
		{"the workspace's active conversations", conversationList(ws, data.ConversationFilter{Status: data.ConversationActive}, nil), convs[n/2], "conversations_open", 40},
		{"campaigns", campaignList(data.CampaignFilter{}), camps[len(camps)/2], "campaigns_by_agent", each},
		{"completed campaigns", campaignList(data.CampaignFilter{Status: data.CampaignCompleted}), camps[len(camps)/2], "campaigns_by_agent", each},
		{"one agent's campaigns", campaignList(data.CampaignFilter{AgentID: "agt_2"}), camps[len(camps)/2], "campaigns_by_agent", perPage + 1},
	} {
		checkAgentsPagePlan(t, db, c, perPage)
	}
}

// checkAgentsPagePlan checks the plans of c's first page, a page older and a page newer
// than its middle, and both of its cursors' checks (TestLimitedPagesWalkEachAgent).
func checkAgentsPagePlan(t *testing.T, db *DB, c agentsPageCase, perPage int) {
	t.Helper()
	var plans []string
	for _, generic := range []bool{false, true} {
		for _, req := range []data.PageRequest{
			{PerPage: perPage},
			{PerPage: perPage, Cursor: *db.encodeCursor(older, c.ks.binding, c.middle)},
			{PerPage: perPage, Cursor: *db.encodeCursor(newer, c.ks.binding, c.middle)},
		} {
			plans = append(plans, plannedExplain(t, db, generic, func(x *tx) (string, []any, error) {
				q, err := x.pageQuery(c.ks, req)
				return q.sql, q.args, err
			}))
		}
		for _, op := range []string{"<", ">"} {
			plans = append(plans, plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
				sql, args := existsQuery(c.ks, op, c.middle)
				return sql, args, nil
			}))
		}
	}
	for _, plan := range plans {
		checkPlanRows(t, c, plan, perPage)
	}
}

// checkPlanRows checks that plan, of one of c's statements, reads c's index and that no
// step of it yields or passes over more than c.maxRows rows.
func checkPlanRows(t *testing.T, c agentsPageCase, plan string, perPage int) {
	t.Helper()
	if c.index != "" && !strings.Contains(plan, c.index) {
		t.Errorf("%s: the plan reads no %s:\n%s", c.name, c.index, plan)
	}
	for _, m := range regexp.MustCompile(`(?:actual rows|Rows Removed by Filter:)[= ](\d+)`).FindAllStringSubmatch(plan, -1) {
		if n, _ := strconv.Atoi(m[1]); n > c.maxRows {
			t.Errorf("%s: a step read %d rows for a page of %d (at most %d):\n%s", c.name, n, perPage, c.maxRows, plan)
			break
		}
	}
}

// plannedExplain is EXPLAIN ANALYZE of the statement stmt gives, as the planner plans it
// (explain turns sequential and bitmap scans off, for small tables): with its parameters'
// values, or generic, as a plan the server keeps for a prepared statement after a few
// runs (pgx prepares each statement it sends).
func plannedExplain(t *testing.T, db *DB, generic bool, stmt func(*tx) (string, []any, error)) string {
	t.Helper()
	var plan []string
	if err := db.View(context.Background(), func(stx service.Tx) error {
		x := stx.(*tx)
		sql, args, err := stmt(x)
		if err != nil {
			return err
		}
		explain := `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ` + sql
		if generic {
			if _, err := x.exec(`SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`); err != nil {
				return err
			}
			if _, err := x.exec(`PREPARE planned_page AS ` + sql); err != nil {
				return err
			}
			defer x.exec(`DEALLOCATE planned_page`)
			values := make([]string, len(args)) // EXECUTE takes values, not parameters
			for i, a := range args {
				values[i] = sqlLiteral(a)
			}
			explain, args = `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE planned_page(`+strings.Join(values, ", ")+`)`, nil
		}
		rows, err := x.query(explain, args...)
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

// sqlLiteral writes a statement's argument (text, or an array of text) as a literal.
func sqlLiteral(a any) string {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch v := a.(type) {
	case string:
		return quote(v)
	case []string:
		items := make([]string, len(v))
		for i, s := range v {
			items[i] = quote(s)
		}
		return "ARRAY[" + strings.Join(items, ", ") + "]::text[]"
	default:
		return fmt.Sprint(v)
	}
}
