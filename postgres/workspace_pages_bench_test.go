package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkWorkspacePagesBesideOthers reads the first page of 15 of ws_1's 20 calls,
// beside ws_0's and ws_2's 20,000 each (calls), and of ws_3's 20 canceled campaigns,
// beside its 20,000 completed ones (canceled_campaigns), as
// TestWorkspaceListPagesStopAtTheirScope plans them. Each case runs its statement many
// times, so the server's generic plan for it is measured too (the calls' walked calls_pkey
// past the other workspaces' calls before their workspace was pinned in order).
// docs/performance.md records the figures.
func BenchmarkWorkspacePagesBesideOthers(b *testing.B) {
	db := testkit.OpenPostgres(b, nil)
	ctx := context.Background()
	if _, err := db.Pool().Exec(ctx, `
		INSERT INTO calls (id, workspace_id, agent_id, direction, status, created_at, updated_at)
			SELECT 'cal_' || lpad(i::text, 9, '0'), CASE WHEN i % 2001 = 0 THEN 'ws_1' WHEN i % 2 = 0 THEN 'ws_0' ELSE 'ws_2' END,
				'agt_1', 'inbound', 'ended', now(), now() FROM generate_series(1, 40020) i;
		INSERT INTO campaigns (id, workspace_id, agent_id, status, body)
			SELECT 'cmp_' || lpad(i::text, 9, '0'), 'ws_3', 'agt_1', CASE WHEN i % 1001 = 0 THEN 'canceled' ELSE 'completed' END, '{}'
			FROM generate_series(1, 20020) i`); err != nil {
		b.Fatal(err)
	}
	db.Pool().Exec(ctx, `VACUUM ANALYZE calls`)
	db.Pool().Exec(ctx, `VACUUM ANALYZE campaigns`)
	for _, c := range []struct {
		name string
		page func(service.Tx) (int, error)
	}{
		{"calls", func(tx service.Tx) (int, error) {
			list, _, err := tx.Calls("ws_1", nil, data.CallFilter{}, data.PageRequest{PerPage: 15})
			return len(list), err
		}},
		{"canceled_campaigns", func(tx service.Tx) (int, error) {
			list, _, err := tx.Campaigns("ws_3", data.CampaignFilter{Status: data.CampaignCanceled}, nil, data.PageRequest{PerPage: 15})
			return len(list), err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := db.View(ctx, func(tx service.Tx) error {
					n, err := c.page(tx)
					if err == nil && n != 15 {
						err = fmt.Errorf("a page of %d, want 15", n)
					}
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
