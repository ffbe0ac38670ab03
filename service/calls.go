package service

import (
	"context"
	"encoding/json"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/redact"
	"github.com/voiceapi/voiceapi/validate"
)

// CallService keeps the call history of the caller's workspace. Calls of agents outside
// the caller's agent_ids are not found.
type CallService struct{ *base }

var _ data.CallService = (*CallService)(nil)

// call returns a call of ws the caller may see (visibility: its agent); others are not
// found.
func call(tx Tx, p *data.Principal, id string) (*data.Call, error) {
	c, err := tx.Call(id)
	if err != nil {
		return nil, err
	}
	if c == nil || c.WorkspaceID != p.WorkspaceID || !visibilityOf(p).agent(c.AgentID) {
		return nil, data.NotFound("Call")
	}
	return c, nil
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
		list, page, err = tx.Calls(p.WorkspaceID, visibilityOf(p).agents(f.AgentID), f, req)
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
	refs := func(tx Tx) error {
		_, err := s.checkCallRefs(ctx, tx, p, in)
		return err
	}
	if err := s.checkInputAndRefs(ctx, validate.CallCreate(in), refs); err != nil {
		return nil, err
	}
	now := s.timeNow()
	id := s.ids.New(data.PrefixCall)
	raw := &data.Call{
		ID: id, WorkspaceID: p.WorkspaceID, AgentID: in.AgentID, AgentVersion: in.AgentVersion,
		NumberID: in.NumberID, Direction: in.Direction, FromNumber: in.FromNumber, ToNumber: in.ToNumber,
		Status: data.CallRegistered, StartedAt: in.StartedAt, EndedAt: in.EndedAt, DurationMS: in.DurationMS,
		DisconnectionReason: in.DisconnectionReason, Transcript: in.Transcript, RecordingURL: in.RecordingURL,
		Variables: in.Variables, Analysis: in.Analysis, Metadata: in.Metadata,
		// created_at is the time the id carries: lists and rollups order by it.
		CreatedAt: data.NewTime(data.IDTime(data.PrefixCall, id)), UpdatedAt: now,
	}
	if in.Status != nil {
		raw.Status = *in.Status
	}
	normalizeCall(raw)
	if err := fillCourse(raw, now); err != nil {
		return nil, err
	}
	var c *data.Call
	redactIt := func(r *redact.Redactor) error {
		red := *raw
		c = &red
		return redactCall(r, c, allCallFields)
	}
	err = s.writeRedacted(ctx, p.WorkspaceID, in.AgentID, redactIt, func(tx Tx) error {
		published, err := s.checkCallRefs(ctx, tx, p, in)
		if err != nil {
			return err
		}
		if err := checkCallMinutes(tx, p.WorkspaceID, s.now()); err != nil {
			return err
		}
		if err := s.checkRegisterConcurrency(ctx, tx, c); err != nil {
			return err
		}
		if c.AgentVersion == nil {
			c.AgentVersion = published
		}
		var cfg *data.AnalysisConfig
		if c.Analysis != nil {
			// Checked as stored (redacted before the transaction): redaction leaves
			// numbers, booleans and a field's type as they are.
			if cfg, err = callAnalysisConfig(tx, c); err != nil {
				return err
			}
			if err := setAnalysis(c, c.Analysis, cfg, data.AnalysisRuntime, s.timeNow()); err != nil {
				return err
			}
		}
		if in.Usage != nil {
			c.Usage = in.Usage.Usage(nil)
			if err := priceUsage(tx, c); err != nil {
				return err
			}
		}
		return s.storeNewCall(ctx, tx, c, cfg)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// completeCall readies a call made on the server (a conversation's end) for redaction and
// storeNewCall: absent collections made empty, the course completed and checked.
func completeCall(c *data.Call, now data.Time) error {
	normalizeCall(c)
	return fillCourse(c, now)
}

// storeNewCall writes a new, complete and redacted call the way every channel does (a
// registration, a call start, a conversation's end): the record, its search postings, its
// analysis values typed by cfg (nil: no analysis), the analysis job of an agent version
// with auto when it is born ended, call.registered with the events its status implies
// (call.ended for a finished one), and what its agent's rollout and its campaign observe.
func (b *base) storeNewCall(ctx context.Context, tx Tx, c *data.Call, cfg *data.AnalysisConfig) error {
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
	if err := b.autoAnalysis(tx, c, ""); err != nil {
		return err
	}
	if err := b.callEvents(ctx, tx, c, data.EventCallRegistered, "", c.Analysis != nil); err != nil {
		return err
	}
	return b.observeCall(ctx, tx, nil, c)
}

// checkRegisterConcurrency holds a registered call that is open (registered or ongoing)
// to the same concurrency limits as a call start: a limit holds on every channel.
func (s *CallService) checkRegisterConcurrency(ctx context.Context, tx Tx, c *data.Call) error {
	if data.CallFinal(c.Status) {
		return nil
	}
	a, err := tx.Agent(c.AgentID)
	if err != nil || a == nil {
		return err // an unknown agent was refused by checkCallRefs
	}
	return s.checkConcurrency(ctx, tx, c.WorkspaceID, a, s.now())
}

// checkCallRefs reports an agent or number outside the workspace (or an agent the caller
// may not see) and returns the agent's published version.
func (s *CallService) checkCallRefs(ctx context.Context, tx Tx, p *data.Principal, in data.CallCreate) (*int, error) {
	var errs validate.Errors
	// An id of no id's shape was refused by the rules (checkInputAndRefs): not looked up.
	found, published := false, (*int)(nil)
	if data.ValidID(data.PrefixAgent, in.AgentID) {
		var err error
		if found, published, err = tx.AgentRef(p.WorkspaceID, in.AgentID); err != nil {
			return nil, err
		}
	}
	if !found || !visibilityOf(p).agent(in.AgentID) {
		errs.Add("agent_id", "The agent_id field must be an agent of this workspace.")
	} else {
		data.NoteClaimAgent(ctx, in.AgentID)
		if err := checkCallVersion(tx, &errs, in); err != nil {
			return nil, err
		}
	}
	if in.NumberID != nil {
		var n *data.Number
		if data.ValidID(data.PrefixNumber, *in.NumberID) {
			var err error
			if n, err = tx.Number(*in.NumberID); err != nil {
				return nil, err
			}
		}
		if n == nil || n.WorkspaceID != p.WorkspaceID {
			errs.Add("number_id", "The number_id field must be a number of this workspace.")
		}
	}
	return published, errs.Err()
}

// checkCallVersion refuses an agent_version the agent never had: its analysis would be
// checked against no fields and the figures by version would show a version that never
// ran. A version deleted since is one it had (a late call may name it), so the bound is
// the last number given, not the versions stored. The agent is read only when a version
// is named; a call without one takes the published version.
func checkCallVersion(tx Tx, errs *validate.Errors, in data.CallCreate) error {
	if in.AgentVersion == nil || *in.AgentVersion < 1 {
		return nil // none named, or refused by the rules already
	}
	a, err := tx.Agent(in.AgentID)
	if err != nil || a == nil {
		return err
	}
	switch {
	case a.LastVersion == 0:
		errs.Add("agent_version", "The agent_version field must be a version of the agent, which has never been published.")
	case *in.AgentVersion > a.LastVersion:
		errs.Addf("agent_version", "The agent_version field must be a version of the agent: 1 to %d.", a.LastVersion)
	}
	return nil
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
func (b *base) callEvents(ctx context.Context, tx Tx, c *data.Call, first, prev string, analyzed bool) error {
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
		if _, err := b.record(ctx, tx, t, c.WorkspaceID, json.RawMessage(raw)); err != nil {
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
// call's course is final. A caller who may change calls but not read them gets nil.
func (s *CallService) UpdateCall(ctx context.Context, id string, in data.CallUpdate) (*data.Call, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkInput(ctx, validate.CallUpdate(in)); err != nil {
		return nil, err
	}
	if in.LegalHold.Set && !p.HoldsScope(data.WriteScope(data.ModuleCallHistory)) {
		// A hold lifted lets retention delete the call: it takes the right to delete calls,
		// which a calls:runtime key, that may only register and report them, lacks.
		return nil, data.Errorf(data.EFORBIDDEN, "This API key lacks the %s scope: a legal hold is set and lifted only by a key that may delete calls.", data.WriteScope(data.ModuleCallHistory))
	}
	// The members given are redacted before the write transaction (the stored ones were
	// when they came), with the setting of the call's agent, read first.
	agentID, err := s.callAgentID(ctx, p, id)
	if err != nil {
		return nil, err
	}
	var given data.CallUpdate
	redactIt := func(r *redact.Redactor) error {
		given = in
		return redactCallUpdate(r, &given)
	}
	var c *data.Call
	err = s.writeRedacted(ctx, p.WorkspaceID, agentID, redactIt, func(tx Tx) error {
		old, err := call(tx, p, id)
		if err != nil {
			return err
		}
		if old.AgentID != agentID {
			return errRedactionMoved // not the call read before: redact again
		}
		if err := checkCallUpdate(ctx, old, given); err != nil {
			return err
		}
		before := storedSnapshot(old)
		next, cfg, analyzed, err := s.applyCallUpdate(tx, old, given)
		if err != nil {
			return err
		}
		if unchangedCall(before, old, next) {
			c = old
			return errNothingToWrite // nothing changed: no write, no event, no webhook (unchanged.go)
		}
		c = next
		return s.storeCallUpdate(ctx, tx, old, next, given, cfg, analyzed)
	})
	if err != nil {
		return nil, err
	}
	if !visibilityOf(p).record(data.ModuleCallHistory, c.AgentID) {
		return nil, nil // changed, but not the caller's to read (a calls:runtime key)
	}
	return c, nil
}

// callAgentID returns the agent of a call the caller may see, whose redaction setting
// applies to what an update gives.
func (s *CallService) callAgentID(ctx context.Context, p *data.Principal, id string) (string, error) {
	var agentID string
	err := s.store.View(ctx, func(tx Tx) error {
		c, err := call(tx, p, id)
		if err == nil {
			agentID = c.AgentID
		}
		return err
	})
	return agentID, err
}

// redactCallUpdate redacts the transcript, variables and analysis an update gives, in
// place; the members not given stay as they are.
func redactCallUpdate(r *redact.Redactor, given *data.CallUpdate) error {
	red := data.Call{Transcript: given.Transcript.V, Variables: given.Variables.V, Analysis: given.Analysis.V}
	if err := redactCall(r, &red, callFields{given.Transcript.Set, given.Variables.Set, given.Analysis.Set}); err != nil {
		return err
	}
	given.Transcript.V, given.Variables.V, given.Analysis.V = red.Transcript, red.Variables, red.Analysis
	return nil
}

// checkCallUpdate refuses an update the stored call does not allow: a stale If-Match, a
// status moving backwards, a change to a finished call's course.
func checkCallUpdate(ctx context.Context, old *data.Call, given data.CallUpdate) error {
	if err := data.CheckIfMatch(data.IfMatch(ctx), old); err != nil {
		return err
	}
	if given.Status.Set && !data.CallMoveAllowed(old.Status, given.Status.V) {
		return data.Errorf(data.ECONFLICT, "A call's status moves only forward: it cannot go from %s to %s.", old.Status, given.Status.V)
	}
	if data.CallFinal(old.Status) && frozen(old, given) {
		return data.Errorf(data.ECONFLICT, "The call has %s: its started_at, ended_at, duration_ms and disconnection_reason are final; analysis, variables, metadata, transcript and recording_url may still be added.", old.Status)
	}
	return nil
}

// applyCallUpdate returns the call as it will be stored: old with the members given, its
// course completed and checked, a changed analysis (analyzed) checked against cfg, its
// agent version's analysis config, and a given usage merged and priced.
func (s *CallService) applyCallUpdate(tx Tx, old *data.Call, given data.CallUpdate) (next *data.Call, cfg *data.AnalysisConfig, analyzed bool, err error) {
	next = merge(old, given)
	now := s.timeNow()
	if err := fillCourse(next, now); err != nil {
		return nil, nil, false, err
	}
	next.UpdatedAt = now
	analyzed = given.Analysis.Set && !sameJSON(old.Analysis, next.Analysis)
	if analyzed {
		// Checked as stored (redacted): redaction leaves numbers, booleans and a
		// field's type as they are.
		if cfg, err = callAnalysisConfig(tx, next); err != nil {
			return nil, nil, false, err
		}
		if err := setAnalysis(next, next.Analysis, cfg, data.AnalysisRuntime, now); err != nil {
			return nil, nil, false, err
		}
	}
	if given.Usage.Set {
		usage := given.Usage.V
		if usage == nil {
			usage = &data.CallUsageInput{} // null empties the runtime's usage
		}
		next.Usage = usage.Usage(old.Usage)
		if err := priceUsage(tx, next); err != nil {
			return nil, nil, false, err
		}
	}
	return next, cfg, analyzed, nil
}

// storeCallUpdate writes an updated call: the record, its search postings when a searched
// member was given, its analysis values when analyzed, the analysis job its status may
// start, the events of what changed, and what its agent's rollout and its campaign observe.
func (s *CallService) storeCallUpdate(ctx context.Context, tx Tx, old, next *data.Call, given data.CallUpdate, cfg *data.AnalysisConfig, analyzed bool) error {
	if err := tx.PutCall(next); err != nil {
		return err
	}
	if given.Transcript.Set || given.Analysis.Set || given.Variables.Set {
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
	if err := s.callEvents(ctx, tx, next, "", old.Status, analyzed); err != nil {
		return err
	}
	return s.observeCall(ctx, tx, old, next)
}

// unchangedCall reports whether next, an update of old (encoded as before), holds what
// old held: only the updated_at the update stamped differs.
func unchangedCall(before []byte, old, next *data.Call) bool {
	stamped := next.UpdatedAt
	next.UpdatedAt = old.UpdatedAt
	same := unchangedSince(before, next)
	next.UpdatedAt = stamped
	return same
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
		_, err = deleteCall(tx, c)
		return err
	})
}
