package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestConversationListReadsByAgent: a page of one agent's conversations walks the index
// conversations_by_agent (migration 0036) and reads that agent's rows only, not every
// conversation of the workspace filtered one by one.
func TestConversationListReadsByAgent(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	const ws, agent = "ws_01JD6000000000000000000001", "agt_01JD6000000000000000000001"
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	if err := db.Update(ctx, func(stx service.Tx) error {
		for i := range 60 {
			a := fmt.Sprintf("agt_01JD600000000000000000000%d", 2+i%3)
			if i%20 == 0 {
				a = agent
			}
			c := &data.StoredConversation{Conversation: data.Conversation{ID: fmt.Sprintf("conv_01JD6000000000000000000%03d", i), WorkspaceID: ws,
				AgentID: a, Status: data.ConversationActive, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}, StartedBy: "usr_1"}
			if err := stx.InsertConversation(c, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(stx service.Tx) error {
		t := stx.(*tx)
		// A table this small is read whole otherwise: the index's plan is the one in question.
		if _, err := t.exec(`SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)`); err != nil {
			return err
		}
		q, err := t.pageQuery(conversationList(ws, data.ConversationFilter{AgentID: agent}, nil), data.PageRequest{PerPage: 15})
		if err != nil {
			return err
		}
		rows, err := t.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) `+q.sql, q.args...)
		if err != nil {
			return err
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			plan = append(plan, line)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		text := strings.Join(plan, "\n")
		if !strings.Contains(text, "conversations_by_agent on conversations") || strings.Contains(text, "Rows Removed by Filter") {
			return fmt.Errorf("the page does not read the agent's rows by conversations_by_agent:\n%s", text)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
