package service

import "github.com/voiceapi/voiceapi/data"

// pendingJobs returns up to limit queued or running jobs of kind working for agentID:
// the features that spend a model's budget per job bound how many an agent has waiting.
func pendingJobs(tx Tx, workspaceID, kind, agentID string, limit int) ([]*data.JobRecord, error) {
	var out []*data.JobRecord
	for _, status := range []string{data.JobQueued, data.JobRunning} {
		if len(out) >= limit {
			break
		}
		sel := data.JobSelection{JobFilter: data.JobFilter{Kind: kind, Status: status, AgentID: agentID}, Kinds: []string{kind}}
		jobs, _, err := tx.ListJobs(workspaceID, sel, data.PageRequest{PerPage: limit - len(out)})
		if err != nil {
			return nil, err
		}
		out = append(out, jobs...)
	}
	return out, nil
}
