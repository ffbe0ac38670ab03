package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestCallPagesSeekTheirFilter: a page of calls with one filter (agent, number, status,
// direction) or for a caller limited to some agents reads per_page+2 rows of each of its
// arms' index, from the newest or from a cursor in the middle, however many calls of
// other values and other workspaces lie past it, in the plan as sent and in the generic
// plan the server keeps for a prepared statement after a few runs. That plan, not
// knowing the filter's value, walked calls_pkey and passed over them: 19,982 rows for a
// rare agent's page from the middle of 20,000, 39,984 for the first page of failed calls,
// 20,002 for the check of a newer call.
func TestCallPagesSeekTheirFilter(t *testing.T) {
	db := openInternal(t)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		// In each workspace the oldest 16 calls are agt_rare's, on num_rare, outbound and
		// failed; the rest spread over ten agents and numbers, inbound and ended.
		_, err := stx.(*tx).exec(`INSERT INTO calls (id, workspace_id, agent_id, number_id, direction, status, created_at, updated_at)
			SELECT 'cal_' || lpad(i::text, 9, '0') || ws, ws,
				CASE WHEN i <= 16 THEN 'agt_rare' ELSE 'agt_' || (i % 10) END,
				CASE WHEN i <= 16 THEN 'num_rare' ELSE 'num_' || (i % 10) END,
				CASE WHEN i <= 16 THEN 'outbound' ELSE 'inbound' END,
				CASE WHEN i <= 16 THEN 'failed' ELSE 'ended' END, now(), now()
			FROM generate_series(1, 20000) i CROSS JOIN (VALUES ('ws_1'), ('ws_2')) w(ws); ANALYZE calls`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const want = 15
	middle := "cal_000010000ws_1"
	for _, c := range []struct {
		name   string
		f      data.CallFilter
		agents []string
		index  string
		arms   int
	}{
		{"one agent's calls", data.CallFilter{AgentID: "agt_rare"}, nil, "calls_by_agent", 1},
		{"one number's calls", data.CallFilter{NumberID: "num_rare"}, nil, "calls_by_number", 1},
		{"failed calls", data.CallFilter{Status: data.CallFailed}, nil, "calls_by_status", 1},
		{"outbound calls", data.CallFilter{Direction: data.DirectionOutbound}, nil, "calls_by_direction", 1},
		{"a caller limited to a rare agent", data.CallFilter{}, []string{"agt_rare"}, "calls_by_agent", 1},
		{"a caller limited to two agents", data.CallFilter{}, []string{"agt_rare", "agt_1"}, "calls_by_agent", 2},
	} {
		q := callQueryOf(t, db, "ws_1", c.agents, c.f)
		for _, generic := range []bool{false, true} {
			for _, stmt := range []struct {
				desc      bool
				from      string
				inclusive bool
				limit     int
			}{{true, "", false, want + 2}, {true, middle, false, want + 2}, {false, middle, true, 2}} {
				plan := plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
					sql, args := q.walkSQL(stmt.desc, stmt.from, stmt.inclusive, stmt.limit, callCols)
					return sql, args, nil
				})
				if !regexp.MustCompile(`\b` + c.index + `\b`).MatchString(plan) {
					t.Errorf("%s: the plan reads no %s:\n%s", c.name, c.index, plan)
				}
				for _, m := range regexp.MustCompile(`(?:actual rows|Rows Removed by Filter:)[= ](\d+)`).FindAllStringSubmatch(plan, -1) {
					if n, _ := strconv.Atoi(m[1]); n > c.arms*stmt.limit {
						t.Errorf("%s (generic %v, from %q): a step read %d rows for %d:\n%s", c.name, generic, stmt.from, n, stmt.limit, plan)
						break
					}
				}
			}
		}
	}
}

// TestCallPagesStopAtTheirWindow: a page of calls of one filter created from a time
// (CallFilter.From, an id bound after the filter's column in its index) ends each arm's
// index scan at that bound, however many of the filter's calls are older: here 5 calls of
// the window after 20,000 older ones of the same agent, number, direction and status.
// The filter's column compared as a range alone, the generic plan's scan was bounded only
// by it and read on through every older call of the value (222 to 261 pages); pinned
// (pinned), 4 to 8 in all. Planned as sent and generic, the first page.
func TestCallPagesStopAtTheirWindow(t *testing.T) {
	db := openInternal(t)
	from := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		_, err := stx.(*tx).exec(`INSERT INTO calls (id, workspace_id, agent_id, number_id, direction, status, created_at, updated_at)
			SELECT CASE WHEN i <= 20000 THEN 'cal_00' ELSE $1 END || lpad(i::text, 9, '0') || ws, ws,
				'agt_1', 'num_1', 'outbound', 'failed', now(), now()
			FROM generate_series(1, 20005) i CROSS JOIN (VALUES ('ws_1'), ('ws_2')) w(ws)`, data.IDBound(data.PrefixCall, from))
		if err == nil {
			_, err = stx.(*tx).exec(`ANALYZE calls`)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		f      data.CallFilter
		agents []string
	}{
		{"one agent's calls", data.CallFilter{AgentID: "agt_1", From: from}, nil},
		{"one number's calls", data.CallFilter{NumberID: "num_1", From: from}, nil},
		{"failed calls", data.CallFilter{Status: data.CallFailed, From: from}, nil},
		{"outbound calls", data.CallFilter{Direction: data.DirectionOutbound, From: from}, nil},
		{"a caller limited to two agents", data.CallFilter{From: from}, []string{"agt_1", "agt_2"}},
		{"every call (no filter)", data.CallFilter{From: from}, nil}, // the workspace pinned in order
	} {
		q := callQueryOf(t, db, "ws_1", c.agents, c.f)
		for _, generic := range []bool{false, true} {
			plan := plannedExplain(t, db, generic, func(*tx) (string, []any, error) {
				sql, args := q.walkSQL(true, "", false, 17, callCols)
				return sql, args, nil
			})
			checkPlanPages(t, fmt.Sprintf("%s (generic %v)", c.name, generic), plan, 24)
		}
	}
}

// callQueryOf is ws's callQuery of f for a caller limited to agents (nil: every agent).
func callQueryOf(t *testing.T, db *DB, ws string, agents []string, f data.CallFilter) *callQuery {
	t.Helper()
	var q *callQuery
	if err := db.View(context.Background(), func(stx service.Tx) error {
		var err error
		q, err = stx.(*tx).newCallQuery(ws, agents, f)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return q
}
