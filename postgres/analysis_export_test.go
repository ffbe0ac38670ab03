package postgres

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// FieldRollupSums adds calls' analysis values up into field rollups in memory, for a bulk
// load (CopyAnalysis) that skips the per-call upserts.
type FieldRollupSums struct {
	ws, agent string
	sums      map[fieldHour]*data.FieldRollup
}

// NewFieldRollupSums starts the sums of one agent of ws.
func NewFieldRollupSums(ws, agent string) *FieldRollupSums {
	return &FieldRollupSums{ws: ws, agent: agent, sums: map[fieldHour]*data.FieldRollup{}}
}

// CopyAnalysisValues stores the calls' analysis values with COPY and adds them to sums
// (a bulk load for benchmarks; CopyFieldRollups then stores the sums).
func CopyAnalysisValues(ctx context.Context, db *DB, sums *FieldRollupSums, calls []*data.Call, vals []*data.AnalysisValues) error {
	rows := make([][]any, 0, len(calls))
	for i, c := range calls {
		v := vals[i]
		if v == nil {
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		rows = append(rows, []any{c.ID, c.WorkspaceID, c.AgentID, raw})
		for _, f := range v.Fields {
			k := fieldHour{f.Field, v.Hour.UTC(), v.Version}
			if sums.sums[k] == nil {
				sums.sums[k] = &data.FieldRollup{}
			}
			sums.sums[k].Add(data.RollupOfValue(f), 1)
		}
	}
	_, err := db.pool.CopyFrom(ctx, pgx.Identifier{"call_analysis_values"}, []string{"call_id", "workspace_id", "agent_id", "vals"}, pgx.CopyFromRows(rows))
	return err
}

// CopyFieldRollups stores sums with COPY.
func CopyFieldRollups(ctx context.Context, db *DB, sums *FieldRollupSums) error {
	var rows [][]any
	for k, r := range sums.sums {
		rows = append(rows, []any{sums.ws, sums.agent, k.field, k.hour, int32(k.version), r.Count, countsJSON(r.Values), r.Numbers, r.Sum, countsJSON(r.Sketch)})
	}
	_, err := db.pool.CopyFrom(ctx, pgx.Identifier{"call_field_rollups"},
		[]string{"workspace_id", "agent_id", "field", "hour", "version", "calls", "vals", "numbers", "sum", "sketch"}, pgx.CopyFromRows(rows))
	if err == nil {
		_, err = db.pool.Exec(ctx, `ANALYZE call_analysis_values; ANALYZE call_field_rollups`)
	}
	return err
}
