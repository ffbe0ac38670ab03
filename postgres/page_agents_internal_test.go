package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

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
	const ws, n, perPage = "ws_1", 20_000, 15
	// Filled in SQL, not row by row through the engine (10 s under -race): the oldest 20
	// and the newest 20 conversations active, the rest ended; a campaign every fourth
	// conversation (5,000), the newest 10 running. Ids in creation order, as ids are.
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(fmt.Sprintf(`
			INSERT INTO conversations (id, workspace_id, agent_id, status, variables, input_tokens, output_tokens, agent_turns,
					disconnection_reason, items, started_by, created_at, updated_at, ended_at)
				SELECT 'conv_' || lpad(i::text, 9, '0'), '%[1]s', 'agt_' || (i %% 10), CASE WHEN ended THEN 'ended' ELSE 'active' END,
					'{}', 0, 0, 0, CASE WHEN ended THEN 'user_ended' END, 0, 'usr_1', at, at, CASE WHEN ended THEN at END
				FROM generate_series(0, %[2]d - 1) i,
					LATERAL (SELECT i >= 20 AND i < %[2]d - 20 AS ended, '2026-11-20 08:00Z'::timestamptz + i * interval '1 ms' AS at) r;
			INSERT INTO campaigns (id, workspace_id, agent_id, status, body)
				SELECT 'cmp_' || lpad(i::text, 9, '0'), '%[1]s', 'agt_' || (i %% 40 / 4), CASE WHEN i >= %[2]d - 40 THEN 'running' ELSE 'completed' END, '{}'
				FROM generate_series(0, %[2]d - 1, 4) i;
			ANALYZE conversations; ANALYZE campaigns`, ws, n))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	convs := func(i int) string { return fmt.Sprintf("conv_%09d", i) }
	middleCamp := fmt.Sprintf("cmp_%09d", n/2) // the 2,500th of 5,000
	agents := []string{"agt_1", "agt_2"}
	campaignList := func(f data.CampaignFilter) keyset {
		ks := keyset{binding: "campaigns", cols: "id", key: "id", args: []any{ws}}
		ks.narrowByAgent("campaigns", f.AgentID, f.Status, agents, data.CampaignScheduled, data.CampaignRunning, data.CampaignPaused)
		return ks
	}
	each := 2 * (perPage + 1)
	for _, c := range []agentsPageCase{
		{"conversations", conversationList(ws, data.ConversationFilter{}, agents), convs(n / 2), "conversations_by_agent", each},
		{"one agent's conversations", conversationList(ws, data.ConversationFilter{AgentID: "agt_3"}, nil), convs(n / 2), "conversations_by_agent", perPage + 1},
		{"conversations of one agent of the caller's", conversationList(ws, data.ConversationFilter{}, agents[:1]), convs(n / 2), "conversations_by_agent", perPage + 1},
		{"ended conversations", conversationList(ws, data.ConversationFilter{Status: data.ConversationEnded}, agents), convs(n / 2), "conversations_by_agent", each},
		{"active conversations", conversationList(ws, data.ConversationFilter{Status: data.ConversationActive}, agents), convs(n / 2), "", 40},
		{"the workspace's active conversations", conversationList(ws, data.ConversationFilter{Status: data.ConversationActive}, nil), convs(n / 2), "conversations_open", 40},
		{"campaigns", campaignList(data.CampaignFilter{}), middleCamp, "campaigns_by_agent", each},
		{"completed campaigns", campaignPageList(ws, data.CampaignFilter{Status: data.CampaignCompleted}, agents), middleCamp, "campaigns_by_agent_status", each},
		{"one agent's campaigns", campaignList(data.CampaignFilter{AgentID: "agt_2"}), middleCamp, "campaigns_by_agent", perPage + 1},
	} {
		checkAgentsPagePlan(t, db, c, perPage)
	}
}

// checkAgentsPagePlan checks the plans of c's first page, a page older and a page newer
// than its middle, and both of its cursors' checks (TestLimitedPagesWalkEachAgent).
func checkAgentsPagePlan(t *testing.T, db *DB, c agentsPageCase, perPage int) {
	t.Helper()
	for _, plan := range pagePlans(t, db, c.ks, c.middle, perPage) {
		checkPlanRows(t, c, plan, perPage)
	}
}

// pagePlans are the plans (plannedExplain's), as sent and generic, of ks's first page, a
// page older and a page newer than middle, and both of its cursors' checks at middle.
func pagePlans(t *testing.T, db *DB, ks keyset, middle string, perPage int) []string {
	t.Helper()
	var plans []string
	for _, generic := range []bool{false, true} {
		for _, req := range []data.PageRequest{
			{PerPage: perPage},
			{PerPage: perPage, Cursor: *db.encodeCursor(older, ks.binding, middle)},
			{PerPage: perPage, Cursor: *db.encodeCursor(newer, ks.binding, middle)},
		} {
			plans = append(plans, plannedExplain(t, db, generic, func(x *tx) (string, []any, error) {
				q, err := x.pageQuery(ks, req)
				return q.sql, q.args, err
			}))
		}
		for _, op := range []string{"<", ">"} {
			plans = append(plans, plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
				sql, args := existsQuery(ks, op, middle)
				return sql, args, nil
			}))
		}
	}
	return plans
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
// runs (pgx prepares each statement it sends). It counts the pages each step read
// (BUFFERS): a scan's index entries passed over inside the index show there alone.
func plannedExplain(t *testing.T, db *DB, generic bool, stmt func(*tx) (string, []any, error)) string {
	t.Helper()
	var plan []string
	if err := db.View(context.Background(), func(stx service.Tx) error {
		x := stx.(*tx)
		sql, args, err := stmt(x)
		if err != nil {
			return err
		}
		explain := `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) ` + sql
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
			explain, args = `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) EXECUTE planned_page(`+strings.Join(values, ", ")+`)`, nil
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

// sqlLiteral writes a statement's argument (text, or an array of text or booleans) as a
// literal.
func sqlLiteral(a any) string {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch v := a.(type) {
	case nil:
		return "NULL"
	case string:
		return quote(v)
	case []string:
		items := make([]string, len(v))
		for i, s := range v {
			items[i] = quote(s)
		}
		return "ARRAY[" + strings.Join(items, ", ") + "]::text[]"
	case []bool:
		items := make([]string, len(v))
		for i, b := range v {
			items[i] = fmt.Sprint(b)
		}
		return "ARRAY[" + strings.Join(items, ", ") + "]::bool[]"
	default:
		return fmt.Sprint(v)
	}
}

// checkPlanPages checks that no step of plan (plannedExplain's, its planning left out)
// read more than most pages, which a scan's index entries passed over count in.
func checkPlanPages(t *testing.T, name string, plan string, most int) {
	t.Helper()
	plan, _, _ = strings.Cut(plan, "Planning:")
	for _, m := range regexp.MustCompile(`shared hit=(\d+)`).FindAllStringSubmatch(plan, -1) {
		if n, _ := strconv.Atoi(m[1]); n > most {
			t.Errorf("%s: a step read %d pages (at most %d):\n%s", name, n, most, plan)
			return
		}
	}
}
