package postgres

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// What is derived from calls in the same transaction as each call's write: the count of
// every list scope, the hourly rollups and the month's ended-call minutes. The rows are
// adjusted by upserts that add a delta, queued in the write's one batch.

// callAttrs are what the list filters look at.
type callAttrs struct {
	agent, number, direction, status string
}

func attrsOf(c *data.Call) callAttrs {
	a := callAttrs{agent: c.AgentID, direction: c.Direction, status: c.Status}
	if c.NumberID != nil {
		a.number = *c.NumberID
	}
	return a
}

// Scopes of call_scope_counts: every call of the workspace, and one per filter value.
func scopeAgent(id string) string      { return "a/" + id }
func scopeNumber(id string) string     { return "n/" + id }
func scopeDirection(d string) string   { return "d/" + d }
func scopeStatus(status string) string { return "s/" + status }

// scopes returns every scope a call with these attributes is counted in.
func (a callAttrs) scopes() []string {
	s := []string{"", scopeAgent(a.agent), scopeDirection(a.direction), scopeStatus(a.status)}
	if a.number != "" {
		s = append(s, scopeNumber(a.number))
	}
	return s
}

// countDeltas is what moving a call from old's attributes (nil: a new call) to next's
// (nil: a deleted call) changes in the scope counts.
func countDeltas(old, next *callAttrs) map[string]int64 {
	d := map[string]int64{}
	if old != nil {
		for _, s := range old.scopes() {
			d[s]--
		}
	}
	if next != nil {
		for _, s := range next.scopes() {
			d[s]++
		}
	}
	return d
}

// queueScopeCounts adds the non-zero deltas to the workspace's scope counts, in scope
// order (so that concurrent writers lock rows in one order), and removes the scopes left
// empty.
func queueScopeCounts(b *pgx.Batch, ws string, deltas map[string]int64) {
	var scopes []string
	var ns []int64
	shrinks := false
	for s, n := range deltas {
		if n != 0 {
			scopes = append(scopes, s)
			shrinks = shrinks || n < 0
		}
	}
	if len(scopes) == 0 {
		return
	}
	sort.Strings(scopes)
	for _, s := range scopes {
		ns = append(ns, deltas[s])
	}
	b.Queue(`INSERT INTO call_scope_counts AS c (workspace_id, scope, calls)
		SELECT $1, d.scope, d.n FROM unnest($2::text[], $3::bigint[]) AS d(scope, n)
		ON CONFLICT (workspace_id, scope) DO UPDATE SET calls = c.calls + EXCLUDED.calls`, ws, scopes, ns)
	if shrinks {
		b.Queue(`DELETE FROM call_scope_counts WHERE workspace_id = $1 AND scope = ANY($2::text[]) AND calls <= 0`, ws, scopes)
	}
}

// queueRollup adds d to the rollups of the hour holding at, for the workspace (the row
// whose agent_id is empty) and for the agent, and removes the rows left without calls.
func queueRollup(b *pgx.Batch, ws, agent string, at time.Time, d data.CallRollup) {
	if d.IsZero() {
		return
	}
	hour := at.UTC().Truncate(time.Hour)
	// call_reasons_add adds any two {"key": count} objects: the cost maps' too. The agent's
	// row alone counts per version (versions are numbered per agent).
	b.Queue(`INSERT INTO call_rollups AS r (workspace_id, agent_id, hour, calls, ended, failed, duration_ms, with_duration, reasons, cost, version_cost, versions)
		VALUES ($1, '', $3, $4, $5, $6, $7, $8, $9, $10, $11, '{}'), ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (workspace_id, agent_id, hour) DO UPDATE SET calls = r.calls + EXCLUDED.calls,
			ended = r.ended + EXCLUDED.ended, failed = r.failed + EXCLUDED.failed,
			duration_ms = r.duration_ms + EXCLUDED.duration_ms,
			with_duration = r.with_duration + EXCLUDED.with_duration,
			reasons = call_reasons_add(r.reasons, EXCLUDED.reasons),
			cost = call_reasons_add(r.cost, EXCLUDED.cost),
			version_cost = call_reasons_add(r.version_cost, EXCLUDED.version_cost),
			versions = call_reasons_add(r.versions, EXCLUDED.versions)`,
		ws, agent, hour, d.Calls, d.Ended, d.Failed, d.DurationMS, d.WithDuration, countsJSON(d.Reasons), countsJSON(d.Cost), countsJSON(d.VersionCost),
		countsJSON(d.Versions))
	if d.Calls < 0 {
		b.Queue(`DELETE FROM call_rollups WHERE workspace_id = $1 AND agent_id IN ('', $2) AND hour = $3 AND calls <= 0`, ws, agent, hour)
	}
}

// countsJSON encodes a {"key": count} map, {} when nil.
func countsJSON(m map[string]int64) []byte {
	if m == nil {
		return []byte(`{}`)
	}
	b, _ := json.Marshal(m) // a map of strings to integers always encodes
	return b
}

// monthOf is the first day of the UTC month holding t, as a date literal.
func monthOf(t time.Time) string { return t.UTC().Format("2006-01") + "-01" }

// queueMinutes counts a final call's duration in the month it ended.
func queueMinutes(b *pgx.Batch, c *data.Call) {
	if c.DurationMS == nil || c.EndedAt == nil || *c.DurationMS == 0 {
		return
	}
	b.Queue(`INSERT INTO call_minutes AS m (workspace_id, month, duration_ms) VALUES ($1, $2::date, $3)
		ON CONFLICT (workspace_id, month) DO UPDATE SET duration_ms = m.duration_ms + EXCLUDED.duration_ms`,
		c.WorkspaceID, monthOf(c.EndedAt.Time), *c.DurationMS)
}

// EndedCallMillisInMonth implements service.LimitTx.
func (t *tx) EndedCallMillisInMonth(ws string, at time.Time) (int64, error) {
	var ms int64
	err := t.queryRow(`SELECT duration_ms FROM call_minutes WHERE workspace_id = $1 AND month = $2::date`, ws, monthOf(at)).Scan(&ms)
	return ms, noRows(err)
}

// CallRollups implements service.CallTx: whole hours come from the rollups, the partial
// hours at either edge of the range from their calls (data.SumCallRollups).
func (t *tx) CallRollups(ws, agentID string, from, to time.Time, step time.Duration) ([]data.CallBucket, error) {
	hours := func(from, to time.Time, fn func(time.Time, data.CallRollup)) error {
		return t.readRollups(ws, agentID, from, to, fn)
	}
	edges := func(from, to time.Time, fn func(time.Time, data.CallRollup)) error {
		return t.countCalls(ws, agentID, from, to, fn)
	}
	return data.SumCallRollups(from, to, step, hours, edges)
}

// readRollups feeds the rollups of the workspace (or its agent) for the hours in [from, to).
func (t *tx) readRollups(ws, agentID string, from, to time.Time, fn func(time.Time, data.CallRollup)) error {
	rows, err := t.query(`SELECT hour, calls, ended, failed, duration_ms, with_duration, reasons, cost, version_cost, versions FROM call_rollups
		WHERE workspace_id = $1 AND agent_id = $2 AND hour >= $3 AND hour < $4 ORDER BY hour`, ws, agentID, from, to)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var hour time.Time
		var r data.CallRollup
		var reasons, cost, versionCost, versions []byte
		if err := rows.Scan(&hour, &r.Calls, &r.Ended, &r.Failed, &r.DurationMS, &r.WithDuration, &reasons, &cost, &versionCost, &versions); err != nil {
			return err
		}
		for _, m := range []struct {
			raw []byte
			to  *map[string]int64
		}{{reasons, &r.Reasons}, {cost, &r.Cost}, {versionCost, &r.VersionCost}, {versions, &r.Versions}} {
			if err := data.DecodeJSON(m.raw, m.to); err != nil {
				return err
			}
			if len(*m.to) == 0 {
				*m.to = nil
			}
		}
		fn(hour.UTC(), r)
	}
	return rows.Err()
}

// countCalls feeds the calls of the workspace (or its agent) created in [from, to), a span
// within one hour at an edge of the range, under that hour. The span's rows are read only
// when it holds fewer calls than the rest of its hour (both counted on the index first);
// otherwise the answer is the hour's rollup less the rest. The current hour's span ends
// at now, with no call after it: a default range reads none of its calls, however busy
// the hour (bbolt does the same: bolt/analytics.go).
func (t *tx) countCalls(ws, agentID string, from, to time.Time, fn func(time.Time, data.CallRollup)) error {
	hour := from.Truncate(time.Hour)
	lo, hi := data.IDBound(data.PrefixCall, from), data.IDBound(data.PrefixCall, to)
	args := []any{ws, data.IDBound(data.PrefixCall, hour), data.IDBound(data.PrefixCall, hour.Add(time.Hour)), lo, hi}
	agent := ""
	if agentID != "" {
		agent = ` AND agent_id = $6`
		args = append(args, agentID)
	}
	var span, rest int64
	if err := t.queryRow(`SELECT count(*) FILTER (WHERE id >= $4 AND id < $5), count(*) FILTER (WHERE id < $4 OR id >= $5)
		FROM calls WHERE workspace_id = $1 AND id >= $2 AND id < $3`+agent, args...).Scan(&span, &rest); err != nil {
		return err
	}
	if span == 0 {
		return nil
	}
	if span <= rest {
		return t.eachCallRollup(`id >= $2 AND id < $3`+strings.ReplaceAll(agent, "$6", "$4"), append([]any{ws, lo, hi}, args[5:]...), agentID, func(r data.CallRollup) { fn(hour, r) })
	}
	var sum data.CallRollup
	found := false
	if err := t.readRollups(ws, agentID, hour, hour.Add(time.Hour), func(_ time.Time, r data.CallRollup) { sum, found = r, true }); err != nil || !found {
		return err
	}
	err := t.eachCallRollup(`id >= $2 AND id < $3 AND (id < $4 OR id >= $5)`+agent, args, agentID, func(r data.CallRollup) { sum.Add(r, -1) })
	if err != nil || sum.Calls <= 0 {
		return err
	}
	fn(hour, sum)
	return nil
}

// eachCallRollup feeds the rollup of each call of the workspace ($1) that where selects.
func (t *tx) eachCallRollup(where string, args []any, agentID string, fn func(data.CallRollup)) error {
	rows, err := t.query(`SELECT `+callCoreCols+` FROM calls WHERE workspace_id = $1 AND `+where, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanCallCore(rows)
		if err != nil {
			return err
		}
		r := data.RollupOf(c)
		if agentID == "" {
			r = r.WithoutVersions() // as the workspace's hourly rows: versions are numbered per agent
		}
		fn(r)
	}
	return rows.Err()
}
