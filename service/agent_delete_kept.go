package service

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// AgentKeptCutBatch bounds the kept answers one transaction cuts to their claims: an
// agent's delete cuts its first batch with it and leaves the rest to a job, batch by
// batch, so that the writers waiting for the delete wait for one batch, however many
// answers were kept with the agent that day (docs/performance.md, "An agent's
// delete").
const AgentKeptCutBatch = 1_000

// JobKindCutKeptAnswers is the job that cuts to their claims the answers kept with a
// deleted agent past its delete's first batch.
const JobKindCutKeptAnswers = "agent.cut_kept_answers"

type cutKeptAnswersPayload struct {
	AgentID string `json:"agent_id"`
}

// cutKeptAnswersKind is the job's kind. Each run goes on from what is left, so runs again
// cost nothing; should it fail for good, what is left expires with the day as every kept
// answer does (the hourly purge), a replay of it 404 all the while.
func (s *AgentService) cutKeptAnswersKind() JobKind {
	return JobKind{Name: JobKindCutKeptAnswers, Module: data.ModuleAgents, Handle: s.runCutKeptAnswers,
		MaxAttempts: 10, Backoff: ExponentialBackoff(5*time.Second, time.Minute)}
}

// cutKeptAnswersOfDeleted cuts to their claims, in tx, the delete's, the answers kept
// under any token for the requests that acted on agent id (data.NoteClaimAgent): the
// starts of and messages to its conversations, which its delete keeps (conventions §7),
// a call's start (its configuration, credentials included) or registration, its tests
// and test runs, an analysis, a backfill, a campaign's create. None is kept a day under
// keys whose replay is 404 "Agent not found." whatever is kept (the replay re-checks the
// agent noted with the claim, docs/api.md). Cut rather than deleted, as
// deleteConversation cuts a start: the claim still says the request was carried out, so
// a retry is that 404, never a second record, and never the 409 an ended conversation
// would give a message sent afresh. The first AgentKeptCutBatch go with the delete; a
// job of workspace ws cuts the rest.
func (s *AgentService) cutKeptAnswersOfDeleted(tx Tx, ws, id string) error {
	n, err := cutAgentKeptAnswers(tx, id)
	if err != nil || n < AgentKeptCutBatch {
		return err
	}
	payload, err := json.Marshal(cutKeptAnswersPayload{id})
	if err != nil {
		return err
	}
	_, err = s.enqueueJob(tx, data.JobEnqueue{WorkspaceID: ws, AgentID: id, Kind: JobKindCutKeptAnswers, Payload: payload, UniqueKey: id})
	return err
}

// cutAgentKeptAnswers cuts up to AgentKeptCutBatch of the answers kept with agent id to
// their claims, in tx, and says how many.
func cutAgentKeptAnswers(tx Tx, id string) (int, error) {
	kept, err := tx.AgentResponses(id, AgentKeptCutBatch)
	if err != nil {
		return 0, err
	}
	for _, k := range kept {
		if err := tx.PutIdempotentResponse(k.TokenID, k.Key, claimOnly(k.Response)); err != nil {
			return 0, err
		}
	}
	return len(kept), nil
}

// runCutKeptAnswers cuts the job's agent's kept answers, AgentKeptCutBatch a
// transaction, until none is left.
func (s *AgentService) runCutKeptAnswers(ctx context.Context, run *JobRun) error {
	var p cutKeptAnswersPayload
	if err := json.Unmarshal(run.Job.Payload, &p); err != nil {
		return err
	}
	err := inBatches(ctx, s.store, AgentKeptCutBatch, func(tx Tx) (int, error) { return cutAgentKeptAnswers(tx, p.AgentID) })
	if err != nil {
		// As it is, wrapped: the runner judges whether a run again heals it (failureOf).
		return fmt.Errorf("cutting the answers kept with deleted agent %s: %w", p.AgentID, err)
	}
	return nil
}
