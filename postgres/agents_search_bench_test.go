package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkAgentNameSearch reads the first page of a name search of a 20,000-agent
// workspace under data.MaxAgentSearchScan: matching one agent, the newest, and
// matching none ("zzzz"). The walk compares each agent's name_folded (migration 0040) to
// the folded query ("19999": ASCII, so that the same benchmark times the lower(name) it
// replaced); it stops at the bound, 5,000 agents, where it read all 20,000 before the
// bound held on PostgreSQL (docs/performance.md).
func BenchmarkAgentNameSearch(b *testing.B) {
	db := testkit.OpenPostgres(b, nil)
	ctx := context.Background()
	const n = 20000
	now := time.Now()
	if _, err := db.Pool().CopyFrom(ctx, pgx.Identifier{"agents"},
		[]string{"id", "workspace_id", "name", "name_folded", "status", "config", "privacy", "created_at", "updated_at"},
		pgx.CopyFromSlice(n, func(i int) ([]any, error) {
			name := fmt.Sprintf("Agent ÖΣ %d", i)
			return []any{fmt.Sprintf("agt_01JD6%021d", i), "ws_1", name, data.FoldCase(name), "draft", "{}", "{}", now, now}, nil
		})); err != nil {
		b.Fatal(err)
	}
	db.Pool().Exec(ctx, `VACUUM ANALYZE agents`)
	for _, c := range []struct {
		name, q string
		found   int
	}{{"one", "19999", 1}, {"none", "zzzz", 0}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := db.View(ctx, func(tx service.Tx) error {
					ids, _, err := tx.AgentIDs("ws_1", "", nil, service.AgentSearch{Name: c.q, MaxScan: data.MaxAgentSearchScan}, data.PageRequest{PerPage: 15})
					if err == nil && len(ids) != c.found {
						err = fmt.Errorf("found %v", ids)
					}
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
