package service

import (
	"context"
	"encoding/json"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// CallService keeps the call history of the caller's workspace. Calls of agents outside
// the caller's agent_ids are not found.
type CallService struct{ *base }

var _ data.CallService = (*CallService)(nil)

// call returns a call of ws the caller may see; others are not found.
func call(tx Tx, p *data.Principal, id string) (*data.Call, error) {
	c, err := tx.Call(id)
	if err != nil {
		return nil, err
	}
	if c == nil || c.WorkspaceID != p.WorkspaceID || !p.CanSeeAgent(c.AgentID) {
		return nil, data.NotFound("Call")
	}
	return c, nil
}

// visibleAgents is the agent restriction a list or a rollup read applies for p: nil for
// a caller who sees every agent; the filter's agent alone when p may see it; none when
// it may not (a hidden agent has no calls, as an unknown one has none).
func visibleAgents(p *data.Principal, agentID string) []string {
	if len(p.AgentIDs) == 0 {
		return nil
	}
	if agentID != "" {
		if p.CanSeeAgent(agentID) {
			return nil // the filter alone narrows the list to a visible agent
		}
		return []string{}
	}
	return p.AgentIDs
}

// ListCalls implements data.CallService.
func (s *CallService) ListCalls(ctx context.Context, f data.CallFilter, req data.PageRequest) ([]*data.Call, data.Page, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	if err := checkInput(ctx, validate.CallFilterRange(f)); err != nil {
		return nil, data.Page{PerPage: req.PerPage}, err
	}
	var list []*data.Call
	var page data.Page
	err = s.store.View(ctx, func(tx Tx) error {
		var err error
		list, page, err = tx.Calls(p.WorkspaceID, visibleAgents(p, f.AgentID), f, req)
		return err
	})
	return list, page, err
}

// RegisterCall implements data.CallService.
func (s *CallService) RegisterCall(ctx context.Context, in data.CallCreate) (*data.Call, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkInput(ctx, validate.CallCreate(in)); err != nil {
		return nil, err
	}
	var c *data.Call
	err = s.store.Update(ctx, func(tx Tx) error {
		published, err := s.checkCallRefs(tx, p, in)
		if err != nil {
			return err
		}
		if err := checkCallMinutes(tx, p.WorkspaceID, s.now()); err != nil {
			return err
		}
		now := s.timeNow()
		id := s.ids.New(data.PrefixCall)
		c = &data.Call{
			ID: id, WorkspaceID: p.WorkspaceID, AgentID: in.AgentID, AgentVersion: in.AgentVersion,
			NumberID: in.NumberID, Direction: in.Direction, FromNumber: in.FromNumber, ToNumber: in.ToNumber,
			Status: data.CallRegistered, StartedAt: in.StartedAt, EndedAt: in.EndedAt, DurationMS: in.DurationMS,
			DisconnectionReason: in.DisconnectionReason, Transcript: in.Transcript, RecordingURL: in.RecordingURL,
			Variables: in.Variables, Metadata: in.Metadata,
			// created_at is the time the id carries: lists and rollups order by it.
			CreatedAt: data.NewTime(data.IDTime(data.PrefixCall, id)), UpdatedAt: now,
		}
		if in.Status != nil {
			c.Status = *in.Status
		}
		if c.AgentVersion == nil {
			c.AgentVersion = published
		}
		normalizeCall(c)
		if err := fillCourse(c, now); err != nil {
			return err
		}
		var cfg *data.AnalysisConfig
		if in.Analysis != nil {
			if cfg, err = callAnalysisConfig(tx, c); err != nil {
				return err
			}
			if err := setAnalysis(c, in.Analysis, cfg, data.AnalysisRuntime, now); err != nil {
				return err
			}
		}
		if in.Usage != nil {
			c.Usage = in.Usage.Usage(nil)
			if err := priceUsage(tx, c); err != nil {
				return err
			}
		}
		r, err := s.callRedactor(tx, c.WorkspaceID, c.AgentID)
		if err != nil {
			return err
		}
		redactCall(r, c, allCallFields)
		if err := tx.InsertCall(c); err != nil {
			return err
		}
		if err := indexCall(tx, nil, c); err != nil {
			return err
		}
		if cfg != nil {
			if err := storeAnalysisValues(tx, c, cfg); err != nil {
				return err
			}
		}
		if err := s.autoAnalysis(tx, c, ""); err != nil {
			return err
		}
		return s.callEvents(ctx, tx, c, data.EventCallRegistered, "", c.Analysis != nil)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// checkCallRefs reports an agent or number outside the workspace (or an agent the caller
// may not see) and returns the agent's published version.
func (s *CallService) checkCallRefs(tx Tx, p *data.Principal, in data.CallCreate) (*int, error) {
	var errs validate.Errors
	found, published, err := tx.AgentRef(p.WorkspaceID, in.AgentID)
	if err != nil {
		return nil, err
	}
	if !found || !p.CanSeeAgent(in.AgentID) {
		errs.Add("agent_id", "The agent_id field must be an agent of this workspace.")
	}
	if in.NumberID != nil {
		n, err := tx.Number(*in.NumberID)
		if err != nil {
			return nil, err
		}
		if n == nil || n.WorkspaceID != p.WorkspaceID {
			errs.Add("number_id", "The number_id field must be a number of this workspace.")
		}
	}
	return published, errs.Err()
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

// fillCourse completes what the status implies and the runtime left out (an ongoing call
// has started now, a finished one has ended now, a duration follows from both), then
// checks the course of the record as it will be stored: a time filled in can put ended_at
// before a started_at given in the future.
func fillCourse(c *data.Call, now data.Time) error {
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
	var errs validate.Errors
	validate.CallCourse(&errs, c.Status, c.StartedAt, c.EndedAt, c.DurationMS)
	return errs.Err()
}

// callEvents records first (if any), then call.started or call.ended for a status reached
// from prev, then call.analyzed. The call is encoded once for all of them.
func (s *CallService) callEvents(ctx context.Context, tx Tx, c *data.Call, first, prev string, analyzed bool) error {
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
	if len(types) == 0 {
		return nil
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	for _, t := range types {
		if _, err := s.record(ctx, tx, t, c.WorkspaceID, json.RawMessage(raw)); err != nil {
			return err
		}
	}
	return nil
}

// Call implements data.CallService.
func (s *CallService) Call(ctx context.Context, id string) (*data.Call, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	var c *data.Call
	err = s.store.View(ctx, func(tx Tx) error {
		c, err = call(tx, p, id)
		return err
	})
	return c, err
}

// UpdateCall implements data.CallService: the status moves forward only, and a finished
// call's course is final.
func (s *CallService) UpdateCall(ctx context.Context, id string, in data.CallUpdate) (*data.Call, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkInput(ctx, validate.CallUpdate(in)); err != nil {
		return nil, err
	}
	var c *data.Call
	err = s.store.Update(ctx, func(tx Tx) error {
		old, err := call(tx, p, id)
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
		next := merge(old, in)
		now := s.timeNow()
		if err := fillCourse(next, now); err != nil {
			return err
		}
		next.UpdatedAt = now
		analyzed := in.Analysis.Set && !sameJSON(old.Analysis, next.Analysis)
		var cfg *data.AnalysisConfig
		if analyzed {
			if cfg, err = callAnalysisConfig(tx, next); err != nil {
				return err
			}
			if err := setAnalysis(next, next.Analysis, cfg, data.AnalysisRuntime, now); err != nil {
				return err
			}
		}
		if in.Usage.Set {
			given := in.Usage.V
			if given == nil {
				given = &data.CallUsageInput{} // null empties the runtime's usage
			}
			next.Usage = given.Usage(old.Usage)
			if err := priceUsage(tx, next); err != nil {
				return err
			}
		}
		// Only the members given are redacted: the stored ones were when they came.
		r, err := s.callRedactor(tx, next.WorkspaceID, next.AgentID)
		if err != nil {
			return err
		}
		redactCall(r, next, callFields{in.Transcript.Set, in.Variables.Set, in.Analysis.Set})
		if err := tx.PutCall(next); err != nil {
			return err
		}
		if in.Transcript.Set || in.Analysis.Set || in.Variables.Set {
			if err := indexCall(tx, old, next); err != nil {
				return err
			}
		}
		if analyzed {
			if err := storeAnalysisValues(tx, next, cfg); err != nil {
				return err
			}
		}
		if err := s.autoAnalysis(tx, next, old.Status); err != nil {
			return err
		}
		c = next
		return s.callEvents(ctx, tx, c, "", old.Status, analyzed)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// merge returns old with the members in gives.
func merge(old *data.Call, in data.CallUpdate) *data.Call {
	next := *old
	setOpt(&next.Status, in.Status)
	setPtr(&next.StartedAt, in.StartedAt)
	setPtr(&next.EndedAt, in.EndedAt)
	setPtr(&next.DurationMS, in.DurationMS)
	setPtr(&next.DisconnectionReason, in.DisconnectionReason)
	setPtr(&next.RecordingURL, in.RecordingURL)
	setOpt(&next.Transcript, in.Transcript)
	setOpt(&next.Variables, in.Variables)
	setOpt(&next.Analysis, in.Analysis)
	setOpt(&next.Metadata, in.Metadata)
	setOpt(&next.LegalHold, in.LegalHold)
	normalizeCall(&next)
	return &next
}

// setPtr points *dst at o's value when o was given (the member is not nullable).
func setPtr[T any](dst **T, o data.Opt[T]) {
	if o.Set {
		v := o.V
		*dst = &v
	}
}

// frozen reports whether an update tries to change a course field of a finished call.
func frozen(old *data.Call, in data.CallUpdate) bool {
	eqTime := func(a *data.Time, b data.Time) bool { return a != nil && a.Equal(b.Time) }
	return in.StartedAt.Set && !eqTime(old.StartedAt, in.StartedAt.V) ||
		in.EndedAt.Set && !eqTime(old.EndedAt, in.EndedAt.V) ||
		in.DurationMS.Set && (old.DurationMS == nil || *old.DurationMS != in.DurationMS.V) ||
		in.DisconnectionReason.Set && (old.DisconnectionReason == nil || *old.DisconnectionReason != in.DisconnectionReason.V)
}

// sameJSON reports whether two analysis objects encode alike: an update that sends the
// stored analysis again is not a new analysis.
func sameJSON(a, b map[string]any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// DeleteCall implements data.CallService.
func (s *CallService) DeleteCall(ctx context.Context, id string) error {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx Tx) error {
		c, err := call(tx, p, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), c); err != nil {
			return err
		}
		if c.LegalHold {
			return data.Errorf(data.ECONFLICT, "The call is on legal hold: set legal_hold to false before deleting it.")
		}
		return deleteCall(tx, c)
	})
}
