package service

import (
	"encoding/json"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/redact"
)

// jobConcerns is what a job's payload names, read alike from every kind's payload (each
// names its records under these members): the records job.failed tells beside the job.
type jobConcerns struct {
	KnowledgeBaseID string `json:"knowledge_base_id"`
	CampaignID      string `json:"campaign_id"`
	CallID          string `json:"call_id"`
	TestRunID       string `json:"run_id"`
}

// recordJobFailed records job.failed for job id in tx, the transaction that failed it for
// good (the runner's finish, only while it held the job): so the event is sent once, with
// the failure, and never for a retry or for a run whose lease was lost. The job is read
// back as stored, so the event shows it as GET /jobs does.
func (b *base) recordJobFailed(tx Tx, id string) error {
	j, err := tx.Job(id)
	if err != nil || j == nil || j.Status != data.JobFailed {
		return err
	}
	ev := data.JobFailure{Job: j.Job}
	var c jobConcerns
	_ = json.Unmarshal(j.Payload, &c) // a payload that names nothing concerns nothing more
	ev.KnowledgeBaseID, ev.CampaignID = optionalID(c.KnowledgeBaseID), optionalID(c.CampaignID)
	ev.CallID, ev.TestRunID = optionalID(c.CallID), optionalID(c.TestRunID)
	if j.LastError != nil {
		msg := redact.Secrets(*j.LastError, b.jobSecrets(tx, j)...)
		ev.LastError = &msg
	}
	_, err = b.recordAs(tx, data.Actor{Type: "system"}, data.EventJobFailed, j.WorkspaceID, ev)
	return err
}

// jobSecrets are the credentials a job's work could have handed a remote server, which
// may echo them in its error: the job's agent's model api_key and the workspace's
// embeddings key. A key that does not open is left out, so that failing the job never
// fails on it.
func (b *base) jobSecrets(tx Tx, j *data.JobRecord) []string {
	var sealed []string
	if j.AgentID != nil {
		if a, err := tx.Agent(*j.AgentID); err == nil && a != nil && a.WorkspaceID == j.WorkspaceID && a.LLMConfig.APIKey != nil {
			sealed = append(sealed, *a.LLMConfig.APIKey)
		}
	}
	if w, err := tx.Workspace(j.WorkspaceID); err == nil && w != nil && w.EmbeddingsKey != "" {
		sealed = append(sealed, w.EmbeddingsKey)
	}
	var out []string
	for _, s := range sealed {
		if plain, err := b.sealer.Open(s); err == nil {
			out = append(out, plain)
		}
	}
	return out
}

// optionalID is id, or nil when empty.
func optionalID(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}
