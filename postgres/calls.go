package postgres

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

func init() {
	workspaceCascades = append(workspaceCascades, func(t *tx, ws string) error {
		for _, table := range []string{"calls", "call_scope_counts", "call_rollups", "call_minutes",
			"price_tables", "call_analysis_values", "call_field_rollups"} {
			if _, err := t.exec(`DELETE FROM `+table+` WHERE workspace_id = $1`, ws); err != nil {
				return err
			}
		}
		return nil
	})
}

const callCols = `id, workspace_id, agent_id, agent_version, number_id, direction, from_number, to_number,
	status, started_at, ended_at, duration_ms, disconnection_reason, transcript, recording_url,
	variables, analysis, metadata, legal_hold, created_at, updated_at,
	analysis_source, analyzed_at, analysis_error, usage, cost`

// scanCall reads the callCols of a row, then extra.
func scanCall(row pgx.Row, extra ...any) (*data.Call, error) {
	var c data.Call
	var started, ended, analyzed *time.Time
	var created, updated time.Time
	var transcript, variables, analysis, metadata, analysisErr, usage, cost []byte
	dest := append([]any{&c.ID, &c.WorkspaceID, &c.AgentID, &c.AgentVersion, &c.NumberID, &c.Direction,
		&c.FromNumber, &c.ToNumber, &c.Status, &started, &ended, &c.DurationMS, &c.DisconnectionReason,
		&transcript, &c.RecordingURL, &variables, &analysis, &metadata, &c.LegalHold, &created, &updated,
		&c.AnalysisSource, &analyzed, &analysisErr, &usage, &cost}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	c.AnalyzedAt = storedTimePtr(analyzed)
	for _, j := range []struct {
		raw []byte
		to  any
	}{{transcript, &c.Transcript}, {variables, &c.Variables}, {analysis, &c.Analysis}, {metadata, &c.Metadata},
		{analysisErr, &c.AnalysisError}, {usage, &c.Usage}, {cost, &c.Cost}} {
		if j.raw == nil {
			continue // SQL NULL: the record's null
		}
		if err := data.DecodeJSON(j.raw, j.to); err != nil {
			return nil, fmt.Errorf("decoding call %s: %w", c.ID, err)
		}
	}
	c.StartedAt, c.EndedAt = storedTimePtr(started), storedTimePtr(ended)
	c.CreatedAt, c.UpdatedAt = storedTime(created), storedTime(updated)
	return &c, nil
}

// callParams are c's values for the callCols, in order.
func callParams(c *data.Call) ([]any, error) {
	var docs [7][]byte
	for i, v := range []any{c.Transcript, c.Variables, c.Analysis, c.Metadata, c.AnalysisError, c.Usage, c.Cost} {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encoding call %s: %w", c.ID, err)
		}
		if string(raw) != "null" {
			docs[i] = raw // nil stays SQL NULL
		}
	}
	return []any{c.ID, c.WorkspaceID, c.AgentID, c.AgentVersion, c.NumberID, c.Direction, c.FromNumber,
		c.ToNumber, c.Status, paramTime(c.StartedAt), paramTime(c.EndedAt), c.DurationMS,
		c.DisconnectionReason, docs[0], c.RecordingURL, docs[1], docs[2], docs[3], c.LegalHold,
		c.CreatedAt.Time, c.UpdatedAt.Time, c.AnalysisSource, paramTime(c.AnalyzedAt), docs[4], docs[5], docs[6]}, nil
}

// Call implements service.CallTx.
func (t *tx) Call(id string) (*data.Call, error) {
	c, err := scanCall(t.queryRow(`SELECT `+callCols+` FROM calls WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return c, nil
}

// InsertCall implements service.CallTx: the row, its scope counts, its hour's rollups and,
// for a final call, its month's minutes, sent together in one round trip.
func (t *tx) InsertCall(c *data.Call) error {
	if err := t.lockWorkspace(c.WorkspaceID); err != nil {
		return err
	}
	params, err := callParams(c)
	if err != nil {
		return err
	}
	var b pgx.Batch
	b.Queue(`INSERT INTO calls (`+callCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
		$13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26)`, params...)
	a := attrsOf(c)
	queueScopeCounts(&b, c.WorkspaceID, countDeltas(nil, &a))
	queueRollup(&b, c.WorkspaceID, c.AgentID, c.CreatedAt.Time, data.RollupOf(c))
	if data.CallFinal(c.Status) {
		queueMinutes(&b, c)
	}
	return t.sendBatch(&b)
}

// callBefore is what a write needs of the stored call it replaces or deletes.
type callBefore struct {
	attrs callAttrs
	roll  data.CallRollup
	hour  time.Time
	final bool
}

// storedCall reads what PutCall and DeleteCall move away from; nil when absent.
func (t *tx) storedCall(id string) (*callBefore, error) {
	c, err := scanCallCore(t.queryRow(`SELECT `+callCoreCols+` FROM calls WHERE id = $1`, id))
	if err != nil {
		return nil, noRows(err)
	}
	return &callBefore{attrs: attrsOf(c), roll: data.RollupOf(c), hour: c.CreatedAt.Time, final: data.CallFinal(c.Status)}, nil
}

// callCoreCols are the columns indexes, counts and rollups derive from.
const callCoreCols = `id, workspace_id, agent_id, number_id, direction, status, duration_ms, disconnection_reason, created_at,
	agent_version, cost->>'currency', (cost->>'total_micros')::bigint`

func scanCallCore(row pgx.Row) (*data.Call, error) {
	var c data.Call
	var created time.Time
	var currency *string
	var costMicros *int64
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.AgentID, &c.NumberID, &c.Direction, &c.Status, &c.DurationMS, &c.DisconnectionReason, &created,
		&c.AgentVersion, &currency, &costMicros); err != nil {
		return nil, err
	}
	c.CreatedAt = storedTime(created)
	if currency != nil && costMicros != nil {
		c.Cost = &data.CallCost{Currency: *currency, TotalMicros: *costMicros} // what RollupOf reads of it
	}
	return &c, nil
}

// PutCall implements service.CallTx: the row, then the differences it makes to the scope
// counts and its hour's rollups; minutes are counted when the call becomes final.
func (t *tx) PutCall(next *data.Call) error {
	if err := t.lockWorkspace(next.WorkspaceID); err != nil {
		return err
	}
	old, err := t.storedCall(next.ID)
	if err != nil {
		return err
	}
	if old == nil {
		return fmt.Errorf("call %s is not stored", next.ID)
	}
	params, err := callParams(next)
	if err != nil {
		return err
	}
	var b pgx.Batch
	b.Queue(`UPDATE calls SET workspace_id = $2, agent_id = $3, agent_version = $4, number_id = $5,
			direction = $6, from_number = $7, to_number = $8, status = $9, started_at = $10, ended_at = $11,
			duration_ms = $12, disconnection_reason = $13, transcript = $14, recording_url = $15,
			variables = $16, analysis = $17, metadata = $18, legal_hold = $19, created_at = $20,
			updated_at = $21, analysis_source = $22, analyzed_at = $23, analysis_error = $24, usage = $25,
			cost = $26
		WHERE id = $1`, params...)
	a := attrsOf(next)
	queueScopeCounts(&b, next.WorkspaceID, countDeltas(&old.attrs, &a))
	if old.hour.Equal(next.CreatedAt.Time) && old.attrs.agent == next.AgentID {
		d := data.RollupOf(next)
		d.Add(old.roll, -1)
		queueRollup(&b, next.WorkspaceID, next.AgentID, old.hour, d)
	} else {
		queueRollup(&b, next.WorkspaceID, old.attrs.agent, old.hour, old.roll.Negated())
		queueRollup(&b, next.WorkspaceID, next.AgentID, next.CreatedAt.Time, data.RollupOf(next))
	}
	if !old.final && data.CallFinal(next.Status) {
		queueMinutes(&b, next)
	}
	return t.sendBatch(&b)
}

// DeleteCall implements service.CallTx, removing the call's search postings too (found by
// its id: terms is not needed). The minutes the call used stay counted.
func (t *tx) DeleteCall(id string, _ map[string]int) error {
	var ws string
	if err := t.queryRow(`SELECT workspace_id FROM calls WHERE id = $1`, id).Scan(&ws); err != nil {
		return noRows(err)
	}
	if err := t.lockWorkspace(ws); err != nil {
		return err
	}
	c, err := scanCallCore(t.queryRow(`DELETE FROM calls WHERE id = $1 RETURNING `+callCoreCols, id))
	if err != nil {
		return noRows(err)
	}
	a := attrsOf(c)
	var b pgx.Batch
	queueScopeCounts(&b, c.WorkspaceID, countDeltas(&a, nil))
	queueRollup(&b, c.WorkspaceID, c.AgentID, c.CreatedAt.Time, data.RollupOf(c).Negated())
	queueCallTerms(&b, c.WorkspaceID, id, nil) // its search postings (calls_search.go)
	if err := t.sendBatch(&b); err != nil {
		return err
	}
	return t.SetCallAnalysisValues(c, nil) // its analysis values (analysis.go)
}
