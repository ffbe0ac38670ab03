package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// SetMaxCallScan sets the bound of rows one page of calls examines, until the test ends
// (cleanup restores it).
func SetMaxCallScan(n int) (restore func()) {
	old := maxCallScan
	maxCallScan = n
	return func() { maxCallScan = old }
}

// CallsCursor returns the next_cursor an unfiltered list of the workspace's calls would
// give after the call id (benchmarks start deep pages from it without walking to them).
func CallsCursor(db *DB, ws, id string) string {
	return *db.encodeCursor(older, binding("calls", ws, "", "", "", "", "0", "0"), id)
}

// What the maintained tables must hold, recomputed from the calls.
const (
	scopeCountsFromCalls = `SELECT workspace_id, scope, count(*) AS calls FROM (
			SELECT workspace_id, '' AS scope FROM calls
			UNION ALL SELECT workspace_id, 'a/' || agent_id FROM calls
			UNION ALL SELECT workspace_id, 'n/' || number_id FROM calls WHERE number_id IS NOT NULL
			UNION ALL SELECT workspace_id, 'd/' || direction FROM calls
			UNION ALL SELECT workspace_id, 's/' || status FROM calls
		) s GROUP BY 1, 2`
	// rollupsFromCalls: the calls counted in the workspace's row and their agent's (base),
	// the cost maps summed per currency and per version and currency, and an agent's rows'
	// per-version counts (keyed "<version>|<kind>" as data/call_rollup_versions.go writes
	// them, none at 0; the workspace's rows carry none), joined by hour.
	rollupsFromCalls = `SELECT main.workspace_id, main.agent_id, main.hour, main.calls, main.ended, main.failed, main.duration_ms,
			main.with_duration, main.reasons, coalesce(costs.cost, '{}'), coalesce(version_costs.version_cost, '{}'),
			coalesce(versions.versions, '{}')
		FROM (SELECT workspace_id, agent_id, hour, sum(calls)::bigint AS calls, sum(ended)::bigint AS ended,
				sum(failed)::bigint AS failed, sum(duration_ms)::bigint AS duration_ms, sum(with_duration)::bigint AS with_duration,
				coalesce(jsonb_object_agg(reason, calls) FILTER (WHERE reason IS NOT NULL), '{}') AS reasons
			FROM (
				SELECT workspace_id, agent_id, hour, disconnection_reason AS reason, count(*) AS calls,
					count(*) FILTER (WHERE status = 'ended') AS ended, count(*) FILTER (WHERE status = 'failed') AS failed,
					coalesce(sum(duration_ms), 0) AS duration_ms, count(duration_ms) AS with_duration
				FROM ` + rollupBase + ` b GROUP BY 1, 2, 3, 4
			) g GROUP BY 1, 2, 3) main
		LEFT JOIN (SELECT workspace_id, agent_id, hour, jsonb_object_agg(currency, m) AS cost FROM (
				SELECT workspace_id, agent_id, hour, currency, sum(micros) AS m FROM ` + rollupBase + ` b WHERE currency IS NOT NULL
				GROUP BY 1, 2, 3, 4 HAVING sum(micros) <> 0) c GROUP BY 1, 2, 3) costs USING (workspace_id, agent_id, hour)
		LEFT JOIN (SELECT workspace_id, agent_id, hour, jsonb_object_agg(coalesce(v::text, '') || ' ' || currency, m) AS version_cost FROM (
				SELECT workspace_id, agent_id, hour, agent_version AS v, currency, sum(micros) AS m FROM ` + rollupBase + ` b WHERE currency IS NOT NULL
				GROUP BY 1, 2, 3, 4, 5 HAVING sum(micros) <> 0) c GROUP BY 1, 2, 3) version_costs USING (workspace_id, agent_id, hour)
		LEFT JOIN (SELECT workspace_id, agent_id, hour, jsonb_object_agg(k, n) AS versions FROM (
				SELECT workspace_id, agent_id, hour, coalesce(agent_version::text, '') || '|' || k AS k, sum(n)::bigint AS n
				FROM ` + rollupBase + ` b CROSS JOIN LATERAL (VALUES ('c', 1), ('e', CASE WHEN status = 'ended' THEN 1 ELSE 0 END),
					('f', CASE WHEN status = 'failed' THEN 1 ELSE 0 END), ('d', coalesce(duration_ms, 0)),
					('n', CASE WHEN duration_ms IS NULL THEN 0 ELSE 1 END), ('r|' || disconnection_reason, 1)) AS kinds(k, n)
				WHERE agent_id <> '' AND k IS NOT NULL
				GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0) c GROUP BY 1, 2, 3) versions USING (workspace_id, agent_id, hour)`
	// rollupBase is every call twice: in its workspace's row ('') and its agent's.
	rollupBase = `(SELECT workspace_id, s.agent AS agent_id, date_trunc('hour', created_at, 'UTC') AS hour,
				disconnection_reason, status, duration_ms, agent_version,
				cost->>'currency' AS currency, (cost->>'total_micros')::bigint AS micros
			FROM calls CROSS JOIN LATERAL (VALUES (''), (agent_id)) AS s(agent))`
	minutesFromCalls = `SELECT workspace_id, date_trunc('month', ended_at, 'UTC')::date, sum(duration_ms)
		FROM calls WHERE status IN ('ended', 'failed') AND ended_at IS NOT NULL AND duration_ms <> 0 GROUP BY 1, 2`
)

// CopyCalls stores calls with COPY, leaving the derived tables as they are (a bulk load
// for benchmarks; DeriveCallTables then fills them).
func CopyCalls(ctx context.Context, db *DB, calls []*data.Call) error {
	rows := make([][]any, len(calls))
	for i, c := range calls {
		p, err := callParams(c)
		if err != nil {
			return err
		}
		rows[i] = p
	}
	var cols []string
	for _, col := range strings.Split(callCols, ",") {
		cols = append(cols, strings.TrimSpace(col))
	}
	_, err := db.pool.CopyFrom(ctx, pgx.Identifier{"calls"}, cols, pgx.CopyFromRows(rows))
	return err
}

// DeriveCallTables fills the scope counts, rollups and minutes from every stored call,
// replacing what they held, and refreshes the planner's statistics.
func DeriveCallTables(ctx context.Context, db *DB) error {
	return pgx.BeginFunc(ctx, db.pool, func(q pgx.Tx) error {
		for _, d := range []struct{ table, sql string }{
			{"call_scope_counts", scopeCountsFromCalls}, {"call_rollups", rollupsFromCalls}, {"call_minutes", minutesFromCalls},
		} {
			if _, err := q.Exec(ctx, `DELETE FROM `+d.table); err != nil {
				return err
			}
			if _, err := q.Exec(ctx, `INSERT INTO `+d.table+` `+d.sql); err != nil {
				return err
			}
		}
		_, err := q.Exec(ctx, `ANALYZE calls`)
		return err
	})
}

// DerivedMismatches counts the rows of call_scope_counts and call_rollups that differ
// from what the stored calls add up to (0 when every write kept them exact).
func DerivedMismatches(ctx context.Context, db *DB) (int, error) {
	var total int
	for table, sql := range map[string]string{"call_scope_counts": scopeCountsFromCalls, "call_rollups": rollupsFromCalls} {
		var n int
		q := fmt.Sprintf(`SELECT count(*) FROM ((TABLE %[1]s EXCEPT %[2]s) UNION ALL (%[2]s EXCEPT TABLE %[1]s)) d`, table, sql)
		if err := db.pool.QueryRow(ctx, q).Scan(&n); err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
