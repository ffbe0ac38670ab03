package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// A backfill analyzes an agent's calls of a range again, as one job: newest call first,
// one call at a time, each call's result written in one transaction with the job's
// progress and the position after it (a page cursor), so a run that dies resumes after
// the last call stored and analyzes every call once.

// backfillPayload is a backfill job's work: the agent, the range and the analysis_config
// the calls are analyzed with, as it was when the backfill was asked (a draft edited
// meanwhile changes nothing).
type backfillPayload struct {
	AgentID string              `json:"agent_id"`
	From    data.Time           `json:"from"`
	To      data.Time           `json:"to"`
	Version *int                `json:"agent_version"`
	Config  data.AnalysisConfig `json:"analysis_config"`
}

// backfillEnd is the checkpoint of a backfill that went through its last call.
const backfillEnd = "end"

// BackfillAnalysis implements data.AnalysisService.
func (s *AnalysisService) BackfillAnalysis(ctx context.Context, agentID string, in data.AnalysisBackfill) (*data.Job, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	refs := func(tx Tx) error {
		_, _, err := backfillConfig(tx, p, agentID, in.AgentVersion)
		return err
	}
	if err := s.checkInputAndRefs(ctx, validate.AnalysisBackfill(in), refs); err != nil {
		return nil, err
	}
	var job *data.JobRecord
	err = s.store.Update(ctx, func(tx Tx) error {
		cfg, version, err := backfillConfig(tx, p, agentID, in.AgentVersion)
		if err != nil {
			return err
		}
		pending, err := pendingJobs(tx, p.WorkspaceID, JobKindAnalysisBackfill, agentID, 1)
		if err != nil {
			return err
		}
		if len(pending) > 0 {
			// Each backfill asks the model once per call: a second one of the same agent
			// would pay for every call again, as many times as it is posted.
			j := pending[0]
			return data.Errorf(data.ECONFLICT, "The agent's backfill %s is still %s: an agent has one backfill at a time; follow it at GET /api/v1/jobs/%s.", j.ID, j.Status, j.ID)
		}
		data.NoteClaimAgent(ctx, agentID)
		payload, err := json.Marshal(backfillPayload{AgentID: agentID, From: in.From, To: in.To, Version: version, Config: cfg})
		if err != nil {
			return err
		}
		job, err = s.enqueueJob(tx, data.JobEnqueue{WorkspaceID: p.WorkspaceID, AgentID: agentID, Kind: JobKindAnalysisBackfill, Payload: payload})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &job.Job, nil
}

// backfillConfig is the analysis_config a backfill of agentID analyzes calls with and the
// version it comes from: version's, else the published version's, else the agent's
// current one (version nil then). An agent the caller may not see is not found; a version
// the agent lacks, or a configuration that asks for nothing, is a fault of agent_version.
func backfillConfig(tx Tx, p *data.Principal, agentID string, version *int) (data.AnalysisConfig, *int, error) {
	a, err := tx.Agent(agentID)
	if err != nil {
		return data.AnalysisConfig{}, nil, err
	}
	if a == nil || a.WorkspaceID != p.WorkspaceID || !p.CanSeeAgent(agentID) {
		return data.AnalysisConfig{}, nil, data.NotFound("Agent")
	}
	cfg := a.AnalysisConfig
	if version == nil {
		version = a.PublishedVersion
	}
	if version != nil {
		v, err := versionRef(tx, agentID, "agent_version", *version)
		if err != nil {
			return data.AnalysisConfig{}, nil, err
		}
		cfg = v.AnalysisConfig
	}
	if !cfg.Asks() {
		return data.AnalysisConfig{}, nil, data.FieldError("agent_version", "The analysis_config the calls would be analyzed with (agent_version, else the published version, else the current configuration) asks for nothing: no fields, no success_criterion, no summary. Give the agent an analysis_config first (PUT /api/v1/agents/"+agentID+").")
	}
	return cfg, version, nil
}

// runBackfill is the handler of JobKindAnalysisBackfill.
func (s *AnalysisService) runBackfill(ctx context.Context, run *JobRun) error {
	var p backfillPayload
	if err := json.Unmarshal(run.Job.Payload, &p); err != nil {
		return fmt.Errorf("the job's payload: %w", err)
	}
	ws := run.Job.WorkspaceID
	cursor, progress := run.Job.Checkpoint, run.Job.Progress
	if cursor == backfillEnd {
		return nil
	}
	if cursor == "" && progress.Total == 0 {
		total, err := s.countCalls(ctx, ws, p)
		if err != nil {
			return err
		}
		progress.Total = total
		if err := run.Progress(ctx, progress, ""); err != nil {
			return err
		}
	}
	filter := data.CallFilter{AgentID: p.AgentID, From: p.From.Time, To: p.To.Time}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var page []*data.Call
		var next data.Page
		err := s.store.View(ctx, func(tx Tx) error {
			var err error
			page, next, err = tx.Calls(ws, nil, filter, data.PageRequest{PerPage: 1, Cursor: cursor})
			return err
		})
		if err != nil {
			return err
		}
		after := backfillEnd
		if next.NextCursor != nil {
			after = *next.NextCursor
		}
		if len(page) == 0 { // the page's scan bound, or the end
			if after == backfillEnd {
				progress.Total = max(progress.Total, progress.Done)
				return run.Progress(ctx, progress, backfillEnd)
			}
			cursor = after
			continue
		}
		progress.Done++
		progress.Total = max(progress.Total, progress.Done)
		if err := s.backfillCall(ctx, run, page[0], &p.Config, progress, after); err != nil {
			return err
		}
		if cursor = after; cursor == backfillEnd {
			return nil
		}
	}
}

// backfillCall analyzes one call of a backfill and stores the result with the progress
// and the position after it. A call that has not finished, or has no transcript, only
// moves the progress. A transient provider failure stores nothing (the call is asked
// again when the job is retried); a misfit is the call's analysis error and the backfill
// goes on; any other failure (a refused key, no model configured) stops it.
func (s *AnalysisService) backfillCall(ctx context.Context, run *JobRun, c *data.Call, cfg *data.AnalysisConfig, p data.JobProgress, after string) error {
	if !data.CallFinal(c.Status) || len(c.Transcript) == 0 {
		return run.Progress(ctx, p, after)
	}
	res, err := s.analyze(ctx, c, cfg)
	var misfit errAnalysisMisfit
	switch {
	case err == nil || errors.As(err, &misfit):
		return s.storeResult(ctx, run, c, cfg, res, err, p, after)
	case isTransientProvider(err):
		return Transient(err)
	}
	if werr := s.storeResult(ctx, run, c, cfg, res, err, p, after); werr != nil {
		return werr
	}
	return fmt.Errorf("call %s: %w", c.ID, err)
}

// countCalls is how many calls of the agent the range holds, from the call rollups.
func (s *AnalysisService) countCalls(ctx context.Context, ws string, p backfillPayload) (int64, error) {
	var n int64
	err := s.store.View(ctx, func(tx Tx) error {
		buckets, err := tx.CallRollups(ws, p.AgentID, p.From.Time, p.To.Time, 24*time.Hour)
		for _, b := range buckets {
			n += b.Calls
		}
		return err
	})
	return n, err
}
