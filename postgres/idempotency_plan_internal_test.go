package postgres

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// An agent's delete reads the answers kept with it over the partial index of migration
// 0033, and a token's delete takes its answers over the primary key: neither reads
// every kept answer.
func TestKeptAnswersDeletesReadTheirIndexes(t *testing.T) {
	// Not 0032's idempotency_responses_agent_conversation, which it replaced.
	if plan := queryPlan(t, agentResponsesSQL, "agt_1", 1000); !regexp.MustCompile(`idempotency_responses_agent\b`).MatchString(plan) {
		t.Errorf("an agent's delete does not read idempotency_responses_agent:\n%s", plan)
	}
	if plan := queryPlan(t, deleteTokenResponsesSQL, int64(1), 1000); !strings.Contains(plan, "idempotency_responses_pkey") {
		t.Errorf("a token's delete does not read the primary key:\n%s", plan)
	}
	// A workspace's delete and a token's in it read migration 0035's index, not every
	// kept answer.
	for name, q := range map[string][]any{
		deleteWorkspaceResponsesSQL:      {"ws_1", 1000},
		deleteWorkspaceTokenResponsesSQL: {"ws_1", 1000, int64(1)},
	} {
		if plan := queryPlan(t, name, q...); !regexp.MustCompile(`idempotency_responses_workspace\b`).MatchString(plan) {
			t.Errorf("%s does not read idempotency_responses_workspace:\n%s", name, plan)
		}
	}
	// A member's removal seeks in 0038's index, to the token's answers in the workspace
	// past where its last batch stopped, and walks on from there in key order: not the
	// token's answers elsewhere, not filtering on the time (which re-reads what it spares).
	plan := queryPlan(t, deleteWorkspaceTokenResponsesBeforeSQL, "ws_1", 1000, int64(1), time.Now(), []byte("k"))
	if !regexp.MustCompile(`Index (Only )?Scan using idempotency_responses_workspace on`).MatchString(plan) ||
		!strings.Contains(plan, `(token_id = '1'::bigint) AND (key > `) {
		t.Errorf("a member's removal's walk does not seek in the workspace's index by key:\n%s", plan)
	}
	if strings.Contains(plan, "Sort Key: idempotency_responses.key") {
		t.Errorf("a member's removal's walk sorts the answers it reads:\n%s", plan)
	}
	if strings.Contains(plan, "Filter: (created_at") {
		t.Errorf("a member's removal's walk filters on the time:\n%s", plan)
	}
}
