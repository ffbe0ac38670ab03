package postgres

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// Post-call analysis and cost beside the calls (service.AnalysisTx): the tables of
// migration 0013. A call's analysis values and the per-field rollups move together, in
// the call's write transaction.

// PriceTable implements service.AnalysisTx.
func (t *tx) PriceTable(ws string) (*data.PriceTable, error) {
	var p data.PriceTable
	var prices []byte
	var updated time.Time
	err := t.queryRow(`SELECT currency, prices, updated_at FROM price_tables WHERE workspace_id = $1`, ws).Scan(&p.Currency, &prices, &updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := data.DecodeJSON(prices, &p.Prices); err != nil {
		return nil, fmt.Errorf("decoding the price table of %s: %w", ws, err)
	}
	p.UpdatedAt = storedTimePtr(&updated)
	return &p, nil
}

// PutPriceTable implements service.AnalysisTx.
func (t *tx) PutPriceTable(ws string, p *data.PriceTable) error {
	prices, err := json.Marshal(p.Prices)
	if err != nil {
		return err
	}
	var updated time.Time
	if p.UpdatedAt != nil {
		updated = p.UpdatedAt.Time
	}
	_, err = t.exec(`INSERT INTO price_tables (workspace_id, currency, prices, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_id) DO UPDATE SET currency = EXCLUDED.currency, prices = EXCLUDED.prices,
			updated_at = EXCLUDED.updated_at`, ws, p.Currency, prices, updated)
	return err
}

// fieldHour is one call_field_rollups row's key within an agent.
type fieldHour struct {
	field   string
	hour    time.Time
	version int
}

// SetCallAnalysisValues implements service.AnalysisTx: the stored values' contribution
// and next's, summed per row, go out as one upsert.
func (t *tx) SetCallAnalysisValues(c *data.Call, next *data.AnalysisValues) error {
	var old *data.AnalysisValues
	var raw []byte
	var err error
	if next == nil {
		err = t.queryRow(`DELETE FROM call_analysis_values WHERE call_id = $1 RETURNING vals`, c.ID).Scan(&raw)
	} else {
		err = t.queryRow(`SELECT vals FROM call_analysis_values WHERE call_id = $1`, c.ID).Scan(&raw)
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return err
	default:
		old = &data.AnalysisValues{}
		if err := data.DecodeJSON(raw, old); err != nil {
			return fmt.Errorf("decoding the analysis values of call %s: %w", c.ID, err)
		}
	}
	deltas := map[fieldHour]*data.FieldRollup{}
	for _, v := range []struct {
		vals *data.AnalysisValues
		sign int64
	}{{old, -1}, {next, 1}} {
		if v.vals == nil {
			continue
		}
		for _, f := range v.vals.Fields {
			k := fieldHour{f.Field, v.vals.Hour.UTC(), v.vals.Version}
			if deltas[k] == nil {
				deltas[k] = &data.FieldRollup{}
			}
			deltas[k].Add(data.RollupOfValue(f), v.sign)
		}
	}
	var b pgx.Batch
	queueFieldRollups(&b, c.WorkspaceID, c.AgentID, deltas)
	if next != nil {
		vals, err := json.Marshal(next)
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO call_analysis_values (call_id, workspace_id, agent_id, vals) VALUES ($1, $2, $3, $4)
			ON CONFLICT (call_id) DO UPDATE SET vals = EXCLUDED.vals`, c.ID, c.WorkspaceID, c.AgentID, vals)
	}
	return t.sendBatch(&b)
}

// queueFieldRollups adds the non-zero deltas to the agent's field rollups in key order
// (so that concurrent writers lock rows in one order), and removes the rows left empty.
func queueFieldRollups(b *pgx.Batch, ws, agent string, deltas map[fieldHour]*data.FieldRollup) {
	keys := make([]fieldHour, 0, len(deltas))
	for k, d := range deltas {
		if d.Count != 0 || len(d.Values) > 0 || d.Numbers != 0 || len(d.Sketch) > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	slices.SortFunc(keys, func(x, y fieldHour) int {
		if x.field != y.field {
			if x.field < y.field {
				return -1
			}
			return 1
		}
		if c := x.hour.Compare(y.hour); c != 0 {
			return c
		}
		return x.version - y.version
	})
	var fields, vals, sketches []string
	var hours []time.Time
	var versions []int32
	var calls, numbers []int64
	var sums []float64
	shrinks := false
	for _, k := range keys {
		d := deltas[k]
		fields, hours, versions = append(fields, k.field), append(hours, k.hour), append(versions, int32(k.version))
		calls, numbers, sums = append(calls, d.Count), append(numbers, d.Numbers), append(sums, d.Sum)
		vals, sketches = append(vals, string(countsJSON(d.Values))), append(sketches, string(countsJSON(d.Sketch)))
		shrinks = shrinks || d.Count < 0
	}
	b.Queue(`INSERT INTO call_field_rollups AS r (workspace_id, agent_id, field, hour, version, calls, vals, numbers, sum, sketch)
		SELECT $1, $2, d.field, d.hour, d.version, d.calls, d.vals::jsonb, d.numbers, d.sum, d.sketch::jsonb
		FROM unnest($3::text[], $4::timestamptz[], $5::int[], $6::bigint[], $7::text[], $8::bigint[], $9::float8[], $10::text[])
			AS d(field, hour, version, calls, vals, numbers, sum, sketch)
		ON CONFLICT (workspace_id, agent_id, field, hour, version) DO UPDATE SET calls = r.calls + EXCLUDED.calls,
			vals = call_reasons_add(r.vals, EXCLUDED.vals), numbers = r.numbers + EXCLUDED.numbers,
			sum = CASE WHEN r.numbers + EXCLUDED.numbers = 0 THEN 0 ELSE r.sum + EXCLUDED.sum END,
			sketch = call_reasons_add(r.sketch, EXCLUDED.sketch)`,
		ws, agent, fields, hours, versions, calls, vals, numbers, sums, sketches)
	if shrinks {
		b.Queue(`DELETE FROM call_field_rollups r USING unnest($3::text[], $4::timestamptz[], $5::int[]) AS d(field, hour, version)
			WHERE r.workspace_id = $1 AND r.agent_id = $2 AND r.field = d.field AND r.hour = d.hour AND r.version = d.version
				AND r.calls <= 0`, ws, agent, fields, hours, versions)
	}
}

// FieldRollups implements service.AnalysisTx.
func (t *tx) FieldRollups(ws, agentID, field string, from, to time.Time, step time.Duration) ([]data.FieldBucket, error) {
	hours := func(from, to time.Time, fn func(time.Time, int, data.FieldRollup)) error {
		rows, err := t.query(`SELECT hour, version, calls, vals, numbers, sum, sketch FROM call_field_rollups
			WHERE workspace_id = $1 AND agent_id = $2 AND field = $3 AND hour >= $4 AND hour < $5`, ws, agentID, field, from, to)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var hour time.Time
			var version int
			var r data.FieldRollup
			var vals, sketch []byte
			if err := rows.Scan(&hour, &version, &r.Count, &vals, &r.Numbers, &r.Sum, &sketch); err != nil {
				return err
			}
			if err := data.DecodeJSON(vals, &r.Values); err != nil {
				return err
			}
			if err := data.DecodeJSON(sketch, &r.Sketch); err != nil {
				return err
			}
			fn(hour.UTC(), version, r)
		}
		return rows.Err()
	}
	edges := func(from, to time.Time, fn func(time.Time, int, data.FieldRollup)) error {
		rows, err := t.query(`SELECT vals FROM call_analysis_values WHERE workspace_id = $1 AND agent_id = $2
			AND call_id >= $3 AND call_id < $4`, ws, agentID, data.IDBound(data.PrefixCall, from), data.IDBound(data.PrefixCall, to))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var raw []byte
			var v data.AnalysisValues
			if err := rows.Scan(&raw); err != nil {
				return err
			}
			if err := data.DecodeJSON(raw, &v); err != nil {
				return err
			}
			for _, f := range v.Fields {
				if f.Field == field {
					fn(v.Hour.UTC(), v.Version, data.RollupOfValue(f))
				}
			}
		}
		return rows.Err()
	}
	return data.SumFieldRollups(from, to, step, hours, edges)
}
