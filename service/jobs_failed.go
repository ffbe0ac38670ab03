package service

import (
	"encoding/json"
	"slices"

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
// back as stored, so the event shows it as GET /jobs does, its last_error scrubbed when
// stored (scrubJobError).
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
	_, err = b.recordAs(tx, data.Actor{Type: "system"}, data.EventJobFailed, j.WorkspaceID, ev)
	return err
}

// scrubJobError is msg, a run's failure about to be stored as the job's last_error (read
// by GET /jobs, the console, job.failed and a kind's Failed hook, such as the test run's
// error), without the credentials the job's work could have handed a remote server
// (jobSecrets). Each client scrubs its own key from what it reports; this catches what
// one quotes that it was not given.
func (b *base) scrubJobError(tx Tx, j *data.JobRecord, msg string) (string, error) {
	if msg == "" {
		return msg, nil
	}
	secrets, err := b.jobSecrets(tx, j)
	if err != nil {
		return "", err
	}
	return redact.Secrets(msg, secrets...), nil
}

// jobSecrets are the credentials a job's work could have handed a remote server, which
// may echo them in its error: its agent's model api_key and custom function credential
// headers, those of each stored version (an analysis or a test run of version N runs on
// N's) and of its test run's own configuration (a draft as it was when queued); the
// workspace's simulation model key (tests' simulated callers and judges) and embeddings
// key. No job's work sends a webhook secret or a number's credentials. A key that does
// not open is left out, so that failing the job never fails on it; a read that fails is
// returned: on PostgreSQL a serialization failure swallowed here left the transaction
// aborted, and the outcome's store then failed on the next statement (SQLSTATE 25P02),
// which no retry heals, instead of running again. Read only when a run fails (a retry or
// for good), so reading every version costs nothing on success.
func (b *base) jobSecrets(tx Tx, j *data.JobRecord) ([]string, error) {
	sealed := map[string]bool{}
	var out []string
	config := func(c data.AgentConfig) {
		if c.LLMConfig.APIKey != nil {
			sealed[*c.LLMConfig.APIKey] = true
		}
		out = append(out, b.headerSecrets(c)...)
	}
	if j.AgentID != nil {
		a, err := tx.Agent(*j.AgentID)
		if err != nil {
			return nil, err
		}
		if a != nil && a.WorkspaceID == j.WorkspaceID {
			config(a.AgentConfig)
			if err := forEachAgentVersion(tx, a.ID, func(v *data.AgentVersion) { config(v.AgentConfig) }); err != nil {
				return nil, err
			}
		}
	}
	var c jobConcerns
	if json.Unmarshal(j.Payload, &c) == nil && c.TestRunID != "" {
		r, err := tx.TestRun(c.TestRunID)
		if err != nil {
			return nil, err
		}
		if r != nil && r.WorkspaceID == j.WorkspaceID {
			config(r.Config)
		}
	}
	w, err := tx.Workspace(j.WorkspaceID)
	if err != nil {
		return nil, err
	}
	if w != nil {
		if w.EmbeddingsKey != "" {
			sealed[w.EmbeddingsKey] = true
		}
		if w.Simulation != nil && w.Simulation.APIKey != nil {
			sealed[*w.Simulation.APIKey] = true
		}
	}
	for s := range sealed {
		if plain, err := b.sealer.Open(s); err == nil {
			out = append(out, plain)
		}
	}
	slices.Sort(out) // versions repeat their headers: each secret once
	out = slices.Compact(out)
	// The longest first, so a secret holding another is replaced whole.
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out, nil
}

// forEachAgentVersion calls fn with each stored version of agentID, a page at a time.
func forEachAgentVersion(tx Tx, agentID string, fn func(*data.AgentVersion)) error {
	req := data.PageRequest{PerPage: data.MaxPerPage}
	for {
		list, page, err := tx.AgentVersions(agentID, req)
		if err != nil {
			return err
		}
		for _, v := range list {
			fn(v)
		}
		if page.NextCursor == nil {
			return nil
		}
		req.Cursor = *page.NextCursor
	}
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
