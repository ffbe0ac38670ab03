package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/redact"
)

// Post-call analysis by the agent's model (conventions §24, docs/analysis.md): a call's
// analysis (POST /calls/{id}/analyze, and every call of an agent version with auto when
// it ends) and the backfill of an agent's calls over a range, each a durable job (§26).

// Job kinds of post-call analysis.
const (
	JobKindAnalyzeCall      = "analysis.call"
	JobKindAnalysisBackfill = "analysis.backfill"
)

// analysisAttempts bounds an analysis job's runs: transient provider failures (429,
// 5xx, timeouts) are retried with the job mechanism's backoff.
const analysisAttempts = 6

// AnalysisOptions configure post-call analysis.
type AnalysisOptions struct {
	// Models builds the language model client of an agent version's llm_config (its
	// api_key opened). Without it an analysis fails with that as its error.
	Models func(cfg data.LLMConfig) (llm.Client, error)
}

// AnalysisService implements data.AnalysisService and runs the analysis jobs.
type AnalysisService struct {
	*base
	opts atomic.Pointer[AnalysisOptions]
}

var _ data.AnalysisService = (*AnalysisService)(nil)

func newAnalysisService(b *base) *AnalysisService {
	s := &AnalysisService{base: b}
	s.Configure(b.opts.Analysis)
	return s
}

// Configure replaces the options: serve wires the model clients once the server's
// settings are known; tests point them at a stand-in.
func (s *AnalysisService) Configure(o AnalysisOptions) { s.opts.Store(&o) }

// kinds are the job kinds analysis registers.
func (s *AnalysisService) kinds() []JobKind {
	return []JobKind{
		{Name: JobKindAnalyzeCall, Module: data.ModuleCallHistory, MaxAttempts: analysisAttempts, Handle: s.runCallAnalysis,
			Timeout: 10 * time.Minute, Failed: s.failCallAnalysis},
		{Name: JobKindAnalysisBackfill, Module: data.ModuleCallHistory, MaxAttempts: analysisAttempts, Handle: s.runBackfill},
	}
}

// callAnalysisPayload names the call an analysis job analyzes.
type callAnalysisPayload struct {
	CallID string `json:"call_id"`
}

// enqueueCallAnalysis queues, in tx, the analysis of call c; a call with an analysis
// pending keeps that job.
func (b *base) enqueueCallAnalysis(tx Tx, c *data.Call) (*data.JobRecord, error) {
	payload, err := json.Marshal(callAnalysisPayload{CallID: c.ID})
	if err != nil {
		return nil, err
	}
	return b.enqueueJob(tx, data.JobEnqueue{WorkspaceID: c.WorkspaceID, AgentID: c.AgentID, Kind: JobKindAnalyzeCall,
		Payload: payload, UniqueKey: c.ID})
}

// AnalyzeCall implements data.AnalysisService.
func (s *AnalysisService) AnalyzeCall(ctx context.Context, callID string) (*data.Job, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	var job *data.JobRecord
	err = s.store.Update(ctx, func(tx Tx) error {
		c, err := call(tx, p, callID)
		if err != nil {
			return err
		}
		data.NoteClaimAgent(ctx, c.AgentID)
		cfg, err := callAnalysisConfig(tx, c)
		if err != nil {
			return err
		}
		if !cfg.Asks() {
			return data.FieldError("call_id", "The call's agent version asks analysis for nothing: its analysis_config has no fields, no success_criterion and no summary. "+
				"Give the agent an analysis_config (PUT /api/v1/agents/"+c.AgentID+"); the versions published with it analyze their calls, and a backfill "+
				"(POST /api/v1/agents/"+c.AgentID+"/analysis/backfill) analyzes past calls with it.")
		}
		job, err = s.enqueueCallAnalysis(tx, c)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &job.Job, nil
}

// autoAnalysis queues the analysis of c in tx when it has just ended on an agent version
// with auto (the call's own write, so the job exists exactly when the end does).
func (b *base) autoAnalysis(tx Tx, c *data.Call, before string) error {
	if c.Status != data.CallEnded || before == data.CallEnded {
		return nil
	}
	cfg, err := callAnalysisConfig(tx, c)
	if err != nil || !cfg.Auto || !cfg.Asks() {
		return err
	}
	_, err = b.enqueueCallAnalysis(tx, c)
	return err
}

// analysisDone is the checkpoint of a call's analysis job whose result is stored: a run
// after a crash finds it and does nothing.
const analysisDone = "done"

// runCallAnalysis is the handler of JobKindAnalyzeCall.
func (s *AnalysisService) runCallAnalysis(ctx context.Context, run *JobRun) error {
	if run.Job.Checkpoint == analysisDone {
		return nil // stored by a run that died before the job's end was
	}
	var p callAnalysisPayload
	if err := json.Unmarshal(run.Job.Payload, &p); err != nil {
		return fmt.Errorf("the job's payload: %w", err)
	}
	c, cfg, err := s.loadForAnalysis(ctx, run.Job.WorkspaceID, p.CallID, nil)
	if err != nil || c == nil {
		return err // a call deleted meanwhile has nothing to analyze
	}
	if !cfg.Asks() {
		// The call's version was deleted after the job was queued (the job does not
		// hold it: docs/agents.md "Deleting a version"): no model is asked for nothing.
		err := errors.New("The call's agent version declares no analysis any more: it was deleted after the call ended.")
		if werr := s.storeResult(ctx, run, c, cfg, analysisResult{}, err, data.JobProgress{Done: 1, Total: 1}, analysisDone); werr != nil {
			return werr
		}
		return err
	}
	res, err := s.analyze(ctx, c, cfg)
	if err != nil && isTransientProvider(err) && !run.LastAttempt() {
		return Transient(err)
	}
	if werr := s.storeResult(ctx, run, c, cfg, res, err, data.JobProgress{Done: 1, Total: 1}, analysisDone); werr != nil {
		return werr
	}
	return err // a misfit or a provider's refusal fails the job too, with the call's error
}

// failCallAnalysis is the call analysis kind's Failed: a job that failed for good without
// storing its outcome (its last attempt's server died, or the attempt ran out of time)
// records the job's failure as the call's analysis_error, with call.analysis_failed, as a
// failure the handler stored is; one it stored (the checkpoint) is not recorded twice.
func (s *AnalysisService) failCallAnalysis(ctx context.Context, tx Tx, job *data.JobRecord, out data.JobOutcome) error {
	stored, err := tx.Job(job.ID)
	if err != nil || stored == nil || stored.Checkpoint == analysisDone {
		return err
	}
	var p callAnalysisPayload
	if err := json.Unmarshal(job.Payload, &p); err != nil {
		return nil // the payload names no call
	}
	c, err := tx.Call(p.CallID)
	if err != nil || c == nil || c.WorkspaceID != job.WorkspaceID {
		return err // a call deleted meanwhile has nothing to tell
	}
	next, at := *c, data.NewTime(out.At)
	next.UpdatedAt = at
	next.AnalysisError = &data.AnalysisError{Message: out.Error, At: at}
	if err := tx.PutCall(&next); err != nil {
		return err
	}
	return s.callEventsAs(ctx, tx, &next, data.EventCallAnalysisFailed)
}

// loadForAnalysis reads call id of ws and the analysis_config it is analyzed with:
// override when given (a backfill's), else its agent version's. Nil when the call is
// gone.
func (s *AnalysisService) loadForAnalysis(ctx context.Context, ws, id string, override *data.AnalysisConfig) (*data.Call, *data.AnalysisConfig, error) {
	var c *data.Call
	var cfg *data.AnalysisConfig
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		if c, err = tx.Call(id); err != nil || c == nil || c.WorkspaceID != ws {
			c = nil
			return err
		}
		if cfg = override; cfg == nil {
			cfg, err = callAnalysisConfig(tx, c)
		}
		return err
	})
	return c, cfg, err
}

// analysisResult is one call's analysis as the model answered it, with the model that
// answered (for the usage line).
type analysisResult struct {
	extraction
	provider, model string
}

// analyze asks the model of c's agent version for c's analysis under cfg.
func (s *AnalysisService) analyze(ctx context.Context, c *data.Call, cfg *data.AnalysisConfig) (analysisResult, error) {
	var lc data.LLMConfig
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		lc, err = s.callModelConfig(tx, c)
		return err
	})
	res := analysisResult{provider: lc.Provider, model: modelName(lc)}
	if err != nil {
		return res, err
	}
	models := s.opts.Load().Models
	if models == nil {
		return res, errors.New("no language model client is configured on this server")
	}
	model, err := models(lc)
	if err != nil {
		return res, err
	}
	res.extraction, err = extract(ctx, model, lc, cfg, c)
	return res, err
}

// callModelConfig is the llm_config of c's agent version (the agent's current one for a
// call without a version), its api_key opened.
func (s *AnalysisService) callModelConfig(tx Tx, c *data.Call) (data.LLMConfig, error) {
	lc, err := callLLMConfig(tx, c)
	if err != nil {
		return lc, err
	}
	if lc.APIKey != nil {
		plain, err := s.sealer.Open(*lc.APIKey)
		if err != nil {
			return lc, fmt.Errorf("opening llm_config.api_key: %w", err)
		}
		lc.APIKey = &plain
	}
	return lc, nil
}

// isTransientProvider reports whether err is a provider failure worth retrying (429,
// 5xx, a timeout, a cut stream).
func isTransientProvider(err error) bool {
	var e *llm.Error
	return errors.As(err, &e) && e.Retryable
}

// storeResult writes one call's analysis outcome, in one transaction with the run's
// progress and checkpoint (so a run that dies after it never analyzes the call again):
// the analysis (llm source) and its values, or the analysis error; the model's tokens
// in usage.analysis, priced; call.analyzed on success, call.analysis_failed on a
// failure. A call deleted meanwhile only moves the progress. A run that lost its lease
// stores nothing.
func (s *AnalysisService) storeResult(ctx context.Context, run *JobRun, c *data.Call, cfg *data.AnalysisConfig,
	res analysisResult, failure error, p data.JobProgress, checkpoint string) error {
	// The model's analysis is redacted before the write transaction, as a runtime's is
	// (redaction's cost never holds the store's writer).
	var redacted map[string]any
	apply := func(r *redact.Redactor) error {
		red := data.Call{Analysis: res.analysis}
		if err := redactCall(r, &red, callFields{analysis: true}); err != nil {
			return err
		}
		redacted = red.Analysis
		return nil
	}
	return s.writeRedacted(ctx, c.WorkspaceID, c.AgentID, apply, func(tx Tx) error {
		if err := run.ProgressIn(tx, p, checkpoint); err != nil {
			return err
		}
		old, err := tx.Call(c.ID)
		if err != nil || old == nil {
			return err
		}
		if old.AgentID != c.AgentID {
			return errRedactionMoved // not the call read before: redact again
		}
		next := *old
		now := s.timeNow()
		next.UpdatedAt = now
		if res.usage != (llm.Usage{}) {
			next.Usage = next.Usage.AddAnalysis(data.LLMUsage{Provider: res.provider, Model: res.model,
				InputTokens: int64(res.usage.InputTokens), OutputTokens: int64(res.usage.OutputTokens)})
			if err := priceUsage(tx, &next); err != nil {
				return err
			}
		}
		if failure != nil {
			// Scrubbed as the job's own error is (scrubJobError): every reader of the call sees it.
			msg, err := s.scrubJobError(tx, run.Job, failure.Error())
			if err != nil {
				return err
			}
			next.AnalysisError = &data.AnalysisError{Message: msg, At: now}
			if err := tx.PutCall(&next); err != nil {
				return err
			}
			return s.callEventsAs(ctx, tx, &next, data.EventCallAnalysisFailed)
		}
		merged := map[string]any{}
		for k, v := range old.Analysis {
			if cfg.Field(k) == nil && k != data.AnalysisKeySuccessful && k != data.AnalysisKeySummary {
				merged[k] = v // an undeclared key stays: it is not the model's to answer
			}
		}
		for k, v := range redacted {
			merged[k] = v
		}
		if err := setAnalysis(&next, merged, cfg, data.AnalysisLLM, now); err != nil {
			return err
		}
		if err := tx.PutCall(&next); err != nil {
			return err
		}
		if err := indexCall(tx, old, &next); err != nil {
			return err
		}
		if err := storeAnalysisValues(tx, &next, cfg); err != nil {
			return err
		}
		if err := s.callEventsAs(ctx, tx, &next, data.EventCallAnalyzed); err != nil {
			return err
		}
		// The model's call_successful counts in a rollout's success_rate as a runtime's does.
		return s.observeRollout(ctx, tx, old, &next)
	})
}

// callEventsAs records one event of the call, by the system (a job has no caller).
func (s *AnalysisService) callEventsAs(ctx context.Context, tx Tx, c *data.Call, typ string) error {
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	_, err = s.recordAs(tx, data.Actor{Type: "system"}, typ, c.WorkspaceID, json.RawMessage(raw))
	return err
}

// callLLMConfig is the llm_config c ran on, its api_key still sealed: its agent
// version's, or the agent's current one for a call without a version.
func callLLMConfig(tx Tx, c *data.Call) (data.LLMConfig, error) {
	if c.AgentVersion != nil {
		v, err := tx.AgentVersion(c.AgentID, *c.AgentVersion)
		if err != nil {
			return data.LLMConfig{}, err
		}
		if v != nil {
			return v.LLMConfig, nil
		}
	}
	a, err := tx.Agent(c.AgentID)
	if err != nil {
		return data.LLMConfig{}, err
	}
	if a == nil || a.WorkspaceID != c.WorkspaceID {
		return data.LLMConfig{}, errCallAgentGone
	}
	return a.LLMConfig, nil
}

// errCallAgentGone says that a call's agent no longer exists, so no model is known for it.
var errCallAgentGone = errors.New("the call's agent no longer exists: no model to ask")

// modelName is the model a price table names for lc: an Azure deployment stands for its
// model.
func modelName(lc data.LLMConfig) string {
	if lc.Model == "" {
		return lc.Deployment
	}
	return lc.Model
}
