package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/postgres"
)

// Migration 0018 gives kept responses the agent their request acted on; those kept
// before keep every column and read with none (NULL), which a replay checks as it did
// before (server/idempotency_recheck.go), and a new response keeps its agent.
func TestMigrationKeepsResponsesWithoutAnAgent(t *testing.T) {
	pool := schemaAt(t, 17)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO idempotency_responses (token_id, key, request_hash, status, header, body, created_at, claim_id)
		VALUES (7, 'old', 'h', 201, '{}', 'body', $1, '')`, time.Now()); err != nil {
		t.Fatal(err)
	}
	if applied, err := postgres.Migrate(ctx, pool); err != nil || !slices.Contains(applied, 18) {
		t.Fatalf("migrate: applied %v, %v", applied, err)
	}
	var hash string
	var body []byte
	var agent *string
	if err := pool.QueryRow(ctx, `SELECT request_hash, body, agent_id FROM idempotency_responses WHERE token_id = 7 AND key = 'old'`).Scan(&hash, &body, &agent); err != nil {
		t.Fatal(err)
	}
	if hash != "h" || string(body) != "body" || agent != nil {
		t.Errorf("the response kept before: hash %q, body %q, agent %v; want h, body and no agent", hash, body, agent)
	}
	if _, err := pool.Exec(ctx, `UPDATE idempotency_responses SET agent_id = 'agt_1' WHERE key = 'old'`); err != nil {
		t.Errorf("the migrated table takes an agent: %v", err)
	}
}
