package postgres_test

import (
	"context"
	"testing"
)

// BenchmarkMigrationListsDeletedCampaigns times the open that applies migration 0029 to a
// database holding 200,000 campaign recipients: 100,000 of 100 live campaigns and 100,000
// of 100 deleted ones (no row in campaigns), which it lists. Writing the rows is untimed.
func BenchmarkMigrationListsDeletedCampaigns(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pool := schemaAt(b, 28)
		if _, err := pool.Exec(ctx, `INSERT INTO campaigns (id, workspace_id, agent_id, status, body)
			SELECT 'cmp_live_' || c, 'ws_1', 'agt_1', 'completed', '{}' FROM generate_series(1, 100) c`); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO campaign_recipients (id, campaign_id, workspace_id, state, body)
			SELECT 'rcp_' || n, CASE WHEN n % 2 = 0 THEN 'cmp_live_' ELSE 'cmp_gone_' END || (n % 200 / 2 + 1), 'ws_1', 'pending',
				'{"phone_number":"+14155550100","variables":{"customer_name":"Ada"}}'
			FROM generate_series(1, 200000) n`); err != nil {
			b.Fatal(err)
		}
		db := timedMigratedOpen(b, pool)
		var listed int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM campaigns_deleting`).Scan(&listed); err != nil || listed != 100 {
			b.Fatalf("%d campaigns listed: %v, want the 100 deleted", listed, err)
		}
		db.Close()
	}
}
