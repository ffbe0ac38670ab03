package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.CallService = (*DB)(nil)

// bucketCallMinutes holds the milliseconds of the calls that ended in each calendar month
// of a workspace, key "<ws>\x00YYYY-MM": the usage the call_minutes_per_month limit reads.
var bucketCallMinutes = []byte("call_minutes")

func minutesKey(ws string, t time.Time) []byte {
	return indexKey(ws, t.UTC().Format("2006-01"))
}

// appendFill is the page fill of buckets whose keys are time-ordered ids: new keys land at
// the end of their scope, so pages split at bbolt's default 50% would stay half empty.
const appendFill = 0.9

// loadCall returns a call of ws that the caller may see; others are not found.
func loadCall(ctx context.Context, tx *bbolt.Tx, ws, id string) (*data.Call, error) {
	var c data.Call
	found, err := getJSON(tx.Bucket(bucketCalls), []byte(id), &c)
	if err != nil {
		return nil, err
	}
	p := data.PrincipalFrom(ctx)
	if !found || c.WorkspaceID != ws || p != nil && !p.CanSeeAgent(c.AgentID) {
		return nil, data.NotFound("Call")
	}
	return &c, nil
}

// insertCall writes a new call with its indexes, rollups and minutes. It is the one path
// every stored call takes (the API and the benchmarks' bulk load).
func insertCall(tx *bbolt.Tx, c *data.Call) error {
	b := tx.Bucket(bucketCalls)
	b.FillPercent = appendFill
	if err := putJSON(b, []byte(c.ID), c); err != nil {
		return err
	}
	a := attrsOf(c)
	if err := moveCallIndexes(tx, c.WorkspaceID, c.ID, nil, &a); err != nil {
		return err
	}
	if err := adjustRollups(tx, c, 1); err != nil {
		return err
	}
	if data.CallFinal(c.Status) {
		return addMinutes(tx, c)
	}
	return nil
}

// addMinutes counts a finished call's duration in the month it ended. Minutes are
// consumption: deleting the call later does not give them back.
func addMinutes(tx *bbolt.Tx, c *data.Call) error {
	if c.DurationMS == nil || c.EndedAt == nil || *c.DurationMS == 0 {
		return nil
	}
	b := tx.Bucket(bucketCallMinutes)
	key := minutesKey(c.WorkspaceID, c.EndedAt.Time)
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], scopeCountOf(b, string(key))+uint64(*c.DurationMS))
	return b.Put(key, buf[:])
}

// monthMS returns the milliseconds of calls of ws that ended in the month of t.
func monthMS(tx *bbolt.Tx, ws string, t time.Time) int64 {
	return int64(scopeCountOf(tx.Bucket(bucketCallMinutes), string(minutesKey(ws, t))))
}

// fillCourse completes what the status implies and the runtime left out: an ongoing call
// has started (now), a finished one has ended (now), and a duration follows from both.
func fillCourse(c *data.Call, now data.Time) {
	if c.Status == data.CallOngoing && c.StartedAt == nil {
		c.StartedAt = &now
	}
	if data.CallFinal(c.Status) {
		if c.EndedAt == nil {
			c.EndedAt = &now
		}
		if c.DurationMS == nil && c.StartedAt != nil && !c.EndedAt.Before(c.StartedAt.Time) {
			d := c.EndedAt.Sub(c.StartedAt.Time).Milliseconds()
			c.DurationMS = &d
		}
	}
}

func checkCourse(c *data.Call) error {
	var errs validate.Errors
	validate.CallCourse(&errs, c.Status, c.StartedAt, c.EndedAt, c.DurationMS)
	return errs.Err()
}

// publishedVersion reads the agent's published_version (nil when never published).
func publishedVersion(tx *bbolt.Tx, agentID string) (*int, error) {
	var row struct {
		PublishedVersion *int `json:"published_version"`
	}
	if _, err := getJSON(tx.Bucket(bucketAgents), []byte(agentID), &row); err != nil {
		return nil, err
	}
	return row.PublishedVersion, nil
}

// ListCalls implements data.CallService.
func (db *DB) ListCalls(ctx context.Context, f data.CallFilter, req data.PageRequest) ([]*data.Call, data.Page, error) {
	p := data.PrincipalFrom(ctx)
	ws := p.WorkspaceID
	var list []*data.Call
	var page data.Page
	err := db.view(func(tx *bbolt.Tx) error {
		q := newCallQuery(tx, ws, p, f)
		if f.AgentID != "" && !p.CanSeeAgent(f.AgentID) {
			q.scopes = nil // a hidden agent has no calls, as an unknown one has none
		}
		ids, pg, err := q.page(db, tx, req)
		if err != nil {
			return err
		}
		page = pg
		list = make([]*data.Call, 0, len(ids))
		for _, id := range ids {
			c, err := loadCall(ctx, tx, ws, id)
			if err != nil {
				return err
			}
			list = append(list, c)
		}
		return nil
	})
	return list, page, err
}

// RegisterCall implements data.CallService.
func (db *DB) RegisterCall(ctx context.Context, in data.CallCreate) (*data.Call, error) {
	if err := validate.CallCreate(in); err != nil {
		return nil, err
	}
	p := data.PrincipalFrom(ctx)
	ws := p.WorkspaceID
	var c *data.Call
	err := db.update(func(tx *bbolt.Tx) error {
		var errs validate.Errors
		if !agentInWorkspace(tx, ws, in.AgentID) || !p.CanSeeAgent(in.AgentID) {
			errs.Add("agent_id", "The agent_id field must be an agent of this workspace.")
		}
		if in.NumberID != nil {
			if _, err := loadNumber(tx, ws, *in.NumberID); err != nil {
				errs.Add("number_id", "The number_id field must be a number of this workspace.")
			}
		}
		if err := errs.Err(); err != nil {
			return err
		}
		if err := db.checkCallMinutes(tx, ws); err != nil {
			return err
		}
		now := db.timeNow()
		id := db.ids.New(data.PrefixCall)
		c = &data.Call{
			ID: id, WorkspaceID: ws, AgentID: in.AgentID, AgentVersion: in.AgentVersion,
			NumberID: in.NumberID, Direction: in.Direction, FromNumber: in.FromNumber, ToNumber: in.ToNumber,
			Status: data.CallRegistered, StartedAt: in.StartedAt, EndedAt: in.EndedAt, DurationMS: in.DurationMS,
			DisconnectionReason: in.DisconnectionReason, Transcript: in.Transcript, RecordingURL: in.RecordingURL,
			Variables: in.Variables, Analysis: in.Analysis, Metadata: in.Metadata,
			CreatedAt: data.NewTime(idTime(data.PrefixCall, id)), UpdatedAt: now,
		}
		if in.Status != nil {
			c.Status = *in.Status
		}
		if c.AgentVersion == nil {
			v, err := publishedVersion(tx, in.AgentID)
			if err != nil {
				return err
			}
			c.AgentVersion = v
		}
		normalizeCall(c)
		fillCourse(c, now)
		if err := checkCourse(c); err != nil {
			return err
		}
		if err := insertCall(tx, c); err != nil {
			return err
		}
		return db.callEvents(ctx, tx, c, data.EventCallRegistered, "", c.Analysis != nil)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// normalizeCall gives absent collections their empty values, so clients read [] and {}.
func normalizeCall(c *data.Call) {
	if c.Transcript == nil {
		c.Transcript = []data.TranscriptItem{}
	}
	if c.Variables == nil {
		c.Variables = map[string]any{}
	}
	if c.Metadata == nil {
		c.Metadata = map[string]any{}
	}
}

// callEvents records first (if any), then call.started or call.ended for a status reached
// from prev, then call.analyzed.
func (db *DB) callEvents(ctx context.Context, tx *bbolt.Tx, c *data.Call, first, prev string, analyzed bool) error {
	var types []string
	if first != "" {
		types = append(types, first)
	}
	if c.Status != prev {
		switch {
		case c.Status == data.CallOngoing:
			types = append(types, data.EventCallStarted)
		case data.CallFinal(c.Status):
			types = append(types, data.EventCallEnded)
		}
	}
	if analyzed {
		types = append(types, data.EventCallAnalyzed)
	}
	for _, t := range types {
		if _, err := db.recordEvent(ctx, tx, t, c.WorkspaceID, c); err != nil {
			return err
		}
	}
	return nil
}

// Call implements data.CallService.
func (db *DB) Call(ctx context.Context, id string) (*data.Call, error) {
	ws := data.PrincipalFrom(ctx).WorkspaceID
	var c *data.Call
	err := db.view(func(tx *bbolt.Tx) error {
		var err error
		c, err = loadCall(ctx, tx, ws, id)
		return err
	})
	return c, err
}

// frozen reports the course fields an update tries to change on a finished call.
func frozen(old *data.Call, in data.CallUpdate) bool {
	eqTime := func(a *data.Time, b data.Time) bool { return a != nil && a.Equal(b.Time) }
	return in.StartedAt.Set && !eqTime(old.StartedAt, in.StartedAt.V) ||
		in.EndedAt.Set && !eqTime(old.EndedAt, in.EndedAt.V) ||
		in.DurationMS.Set && (old.DurationMS == nil || *old.DurationMS != in.DurationMS.V) ||
		in.DisconnectionReason.Set && (old.DisconnectionReason == nil || *old.DisconnectionReason != in.DisconnectionReason.V)
}

// UpdateCall implements data.CallService.
func (db *DB) UpdateCall(ctx context.Context, id string, in data.CallUpdate) (*data.Call, error) {
	if err := validate.CallUpdate(in); err != nil {
		return nil, err
	}
	ws := data.PrincipalFrom(ctx).WorkspaceID
	var c *data.Call
	err := db.update(func(tx *bbolt.Tx) error {
		old, err := loadCall(ctx, tx, ws, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), old); err != nil {
			return err
		}
		if in.Status.Set && !data.CallMoveAllowed(old.Status, in.Status.V) {
			return data.Errorf(data.ECONFLICT, "A call's status moves only forward: it cannot go from %s to %s.", old.Status, in.Status.V)
		}
		if data.CallFinal(old.Status) && frozen(old, in) {
			return data.Errorf(data.ECONFLICT, "The call has %s: its started_at, ended_at, duration_ms and disconnection_reason are final; analysis, variables, metadata, transcript and recording_url may still be added.", old.Status)
		}
		next := *old
		setOpt(&next.Status, in.Status)
		if in.StartedAt.Set {
			next.StartedAt = &in.StartedAt.V
		}
		if in.EndedAt.Set {
			next.EndedAt = &in.EndedAt.V
		}
		if in.DurationMS.Set {
			next.DurationMS = &in.DurationMS.V
		}
		if in.DisconnectionReason.Set {
			next.DisconnectionReason = &in.DisconnectionReason.V
		}
		if in.RecordingURL.Set {
			next.RecordingURL = &in.RecordingURL.V
		}
		setOpt(&next.Transcript, in.Transcript)
		setOpt(&next.Variables, in.Variables)
		setOpt(&next.Analysis, in.Analysis)
		setOpt(&next.Metadata, in.Metadata)
		normalizeCall(&next)
		now := db.timeNow()
		fillCourse(&next, now)
		if err := checkCourse(&next); err != nil {
			return err
		}
		next.UpdatedAt = now
		if err := putJSON(tx.Bucket(bucketCalls), []byte(id), &next); err != nil {
			return err
		}
		oldA, nextA := attrsOf(old), attrsOf(&next)
		if oldA != nextA {
			if err := moveCallIndexes(tx, ws, id, &oldA, &nextA); err != nil {
				return err
			}
		}
		if err := adjustRollups(tx, old, -1); err != nil {
			return err
		}
		if err := adjustRollups(tx, &next, 1); err != nil {
			return err
		}
		if !data.CallFinal(old.Status) && data.CallFinal(next.Status) {
			if err := addMinutes(tx, &next); err != nil {
				return err
			}
		}
		c = &next
		return db.callEvents(ctx, tx, c, "", old.Status, in.Analysis.Set && !sameJSON(old.Analysis, in.Analysis.V))
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func setOpt[T any](dst *T, o data.Opt[T]) {
	if o.Set {
		*dst = o.V
	}
}

func sameJSON(a, b map[string]any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// DeleteCall implements data.CallService.
func (db *DB) DeleteCall(ctx context.Context, id string) error {
	ws := data.PrincipalFrom(ctx).WorkspaceID
	return db.update(func(tx *bbolt.Tx) error {
		c, err := loadCall(ctx, tx, ws, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), c); err != nil {
			return err
		}
		return deleteCallTx(tx, c)
	})
}

func deleteCallTx(tx *bbolt.Tx, c *data.Call) error {
	a := attrsOf(c)
	if err := moveCallIndexes(tx, c.WorkspaceID, c.ID, &a, nil); err != nil {
		return err
	}
	if err := adjustRollups(tx, c, -1); err != nil {
		return err
	}
	return tx.Bucket(bucketCalls).Delete([]byte(c.ID))
}

// deleteWorkspaceCalls removes every call of a deleted workspace with its indexes,
// counts, rollups and minutes (a cascade).
func deleteWorkspaceCalls(tx *bbolt.Tx, ws string) error {
	calls := tx.Bucket(bucketCalls)
	for _, id := range scopeIDs(tx.Bucket(bucketCallsIndex), ws) {
		if err := calls.Delete([]byte(id)); err != nil {
			return err
		}
	}
	// Every scope of the workspace starts with its id, followed by "\x00" or "/".
	for _, b := range [][]byte{bucketCallsIndex, bucketCallScopeCounts, bucketCallRollups, bucketCallMinutes} {
		if err := deleteScopePrefix(tx.Bucket(b), ws); err != nil {
			return err
		}
	}
	return nil
}

// deleteScopePrefix deletes the keys "<ws>", "<ws>\x00…" and "<ws>/…" of b. Keys are collected
// first: deleting under a moving cursor can skip entries.
func deleteScopePrefix(b *bbolt.Bucket, ws string) error {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek([]byte(ws)); k != nil && bytes.HasPrefix(k, []byte(ws)); k, _ = c.Next() {
		if len(k) == len(ws) || k[len(ws)] == 0 || k[len(ws)] == '/' {
			keys = append(keys, append([]byte(nil), k...))
		}
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
