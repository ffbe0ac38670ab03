package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestAgentKeptAnswersReadNoCutClaim: the batches of an agent's delete and of its job
// (agent.cut_kept_answers) read the answers still to cut by the partial index, which a
// claim leaves once cut: a batch is not slowed by every claim the batches before it cut.
// Under migration 0032's index (of every answer of a conversation, cut or not), each batch walked
// the claims cut so far, filtered out one by one: 10,000 kept answers took 1.0 s of job,
// 40,000 took 6.4 s, each batch slower than the one before.
func TestAgentKeptAnswersReadNoCutClaim(t *testing.T) {
	db := openInternal(t)
	ctx := context.Background()
	const agent, cut = "agt_01JD6000000000000000000001", 40
	at := data.NewTime(time.Now())
	if err := db.Update(ctx, func(stx service.Tx) error {
		for i := range cut + 1 {
			if err := stx.PutIdempotentResponse(1, fmt.Sprint("turn-", i), &data.IdempotentResponse{Status: 200, Body: []byte("words"),
				CreatedAt: at, AgentID: agent, ConversationID: "conv_1"}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(stx service.Tx) error { // as a batch cuts them
		for i := range cut {
			if err := stx.PutIdempotentResponse(1, fmt.Sprint("turn-", i), &data.IdempotentResponse{CreatedAt: at, AgentID: agent, ConversationID: "conv_1"}); err != nil {
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
		rows, err := t.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) `+agentResponsesSQL, agent, 1000)
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
		if !strings.Contains(text, "using idempotency_responses_agent on") {
			return fmt.Errorf("the plan uses no index of the agent's answers:\n%s", text)
		}
		if m := regexp.MustCompile(`Rows Removed by Filter: (\d+)`).FindStringSubmatch(text); m != nil && m[1] != "0" {
			return fmt.Errorf("the read passed over %s rows, the claims cut; want none:\n%s", m[1], text)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}
