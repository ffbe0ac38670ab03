package service

import (
	"encoding/json"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/redact"
	"github.com/voiceapi/voiceapi/seal"
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
	// A job that outlived its workspace (deleteWorkspace) has no one to tell, and an
	// event would start the deleted workspace's chain again.
	if there, err := tx.WorkspaceExists(j.WorkspaceID); err != nil || !there {
		return err
	}
	ev := data.JobFailure{Job: j.Job}
	var c jobConcerns
	_ = json.Unmarshal(j.Payload, &c) // a payload that names nothing concerns nothing more
	ev.KnowledgeBaseID, ev.CampaignID = optionalID(c.KnowledgeBaseID), optionalID(c.CampaignID)
	ev.CallID, ev.TestRunID = optionalID(c.CallID), optionalID(c.TestRunID)
	if j.LastError != nil {
		secrets, err := b.jobSecrets(tx, j)
		if err != nil {
			return err
		}
		msg := redact.Secrets(*j.LastError, secrets...)
		ev.LastError = &msg
	}
	_, err = b.recordAs(tx, data.Actor{Type: "system"}, data.EventJobFailed, j.WorkspaceID, ev)
	return err
}

// jobSecrets are the credentials a job's work could have handed a remote server, which
// may echo them in its error: the job's agent's model api_key and custom function
// credential headers, and the workspace's embeddings key. A key that does not open is
// left out, so that failing the job never fails on it; a read that fails is returned:
// on PostgreSQL a serialization failure swallowed here left the transaction aborted, and
// the outcome's store then failed on the next statement (SQLSTATE 25P02), which no retry
// heals, instead of running again.
func (b *base) jobSecrets(tx Tx, j *data.JobRecord) ([]string, error) {
	var sealed, out []string
	if j.AgentID != nil {
		a, err := tx.Agent(*j.AgentID)
		if err != nil {
			return nil, err
		}
		if a != nil && a.WorkspaceID == j.WorkspaceID {
			if a.LLMConfig.APIKey != nil {
				sealed = append(sealed, *a.LLMConfig.APIKey)
			}
			out = append(out, b.headerSecrets(a.AgentConfig)...)
		}
	}
	w, err := tx.Workspace(j.WorkspaceID)
	if err != nil {
		return nil, err
	}
	if w != nil && w.EmbeddingsKey != "" {
		sealed = append(sealed, w.EmbeddingsKey)
	}
	for _, s := range sealed {
		if plain, err := b.sealer.Open(s); err == nil {
			out = append(out, plain)
		}
	}
	return out, nil
}

// optionalID is id, or nil when empty.
func optionalID(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

// headerSecrets are the opened values of c's credential headers; one that does not open
// is left out.
func (b *base) headerSecrets(c data.AgentConfig) []string {
	var out []string
	_, _ = data.MapCredentialHeaders(c, func(v string) (string, error) {
		if !seal.IsSealed(v) {
			out = append(out, v)
		} else if plain, err := b.sealer.Open(v); err == nil {
			out = append(out, plain)
		}
		return v, nil
	})
	return out
}
