package service

import (
	"github.com/voiceapi/voiceapi/data"
)

// deleteWorkspace deletes workspace ws in tx with what was kept under Idempotency-Keys
// for requests made in it (under any token: a member's token bound to another workspace
// adding a member or importing here) and under the tokens bound to it (wherever they
// acted), claims too: the first of them within cut's batch (TokenKeptDeleteBatch), the
// rest by idempotency.delete_token_answers jobs, which the caller queues (cut.queue)
// after this delete. A workspace may hold far more than a batch: each of its tokens up
// to 432,000 answers a day at the default rate limit, its members up to 100 login tokens
// each beside their keys, and requests of other workspaces' tokens besides
// (docs/performance.md: 27 µs an answer on bbolt, every writer of the file waiting).
//
// The jobs outlive the workspace rather than the delete taking the rest itself (which
// would be the unbounded transaction again): they are queued after storage deleted the
// workspace's jobs, under its id, so that the rest goes whatever happens to it, and the
// token jobs still pending from tokens deleted before (storage takes them with the
// workspace) are queued again with them. No one reads them: a deleted workspace has no
// members, and its id is never given again; a job of one that fails for good records no
// job.failed (recordJobFailed), which would start a deleted workspace's events again.
func (b *base) deleteWorkspace(tx Tx, ws string, cut *keptCut) error {
	pending, err := everyPendingJob(tx, ws, JobKindDeleteTokenAnswers)
	if err != nil {
		return err
	}
	if err := cut.take(tx, deleteTokenAnswersPayload{WorkspaceID: ws}, ws); err != nil {
		return err
	}
	tokens, err := tx.WorkspaceTokens(ws)
	if err != nil {
		return err
	}
	for _, id := range tokens {
		if err := cut.take(tx, deleteTokenAnswersPayload{TokenID: id}, ws); err != nil {
			return err
		}
	}
	for _, j := range pending {
		cut.jobs = append(cut.jobs, data.JobEnqueue{WorkspaceID: ws, Kind: j.Kind, Payload: j.Payload, UniqueKey: j.UniqueKey})
	}
	return tx.DeleteWorkspace(ws)
}

// everyPendingJob lists every queued and running jobs of kind in workspace ws.
func everyPendingJob(tx Tx, ws, kind string) ([]*data.JobRecord, error) {
	var out []*data.JobRecord
	for _, status := range []string{data.JobQueued, data.JobRunning} {
		sel := data.JobSelection{JobFilter: data.JobFilter{Kind: kind, Status: status}, Kinds: []string{kind}}
		req := data.PageRequest{PerPage: data.MaxPerPage}
		for {
			jobs, page, err := tx.ListJobs(ws, sel, req)
			if err != nil {
				return nil, err
			}
			out = append(out, jobs...)
			if page.NextCursor == nil {
				break
			}
			req.Cursor = *page.NextCursor
		}
	}
	return out, nil
}
