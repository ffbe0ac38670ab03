package service_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
)

// TestAnalysisErrorIsScrubbedOfTheWorkspaceKeys: a provider refusing an analysis with a
// message that quotes a credential its client was not given (the model client scrubs
// only its own key) leaves it neither in the call's analysis_error, which every reader
// of the call sees, nor in the job's last_error: here the workspace's simulation and
// embeddings keys. Both engines.
func TestAnalysisErrorIsScrubbedOfTheWorkspaceKeys(t *testing.T) {
	e := newAnalysisEnv(t, data.LLMGroq)
	const (
		simulation = "gsk_simulation_0p9o8i7u6y5t4r"
		embeddings = "emb_key_3e4r5t6y7u8i9o0p1a2s"
	)
	if _, err := e.svc.Workspaces.UpdateWorkspace(e.ctx, e.ws, decode[data.WorkspaceUpdate](t, `{
		"embeddings":{"base_url":"https://embed.example.com/v1","model":"text-embedding-3-small","api_key":"`+embeddings+`"},
		"simulation":{"provider":"groq","model":"llama-3.3-70b-versatile","api_key":"`+simulation+`"}}`)); err != nil {
		t.Fatal(err)
	}
	c := e.endedCall(e.agent(fmt.Sprintf(bookingConfig, false)), "call-1")
	e.model.Queue(llmtest.Fail(401, "Invalid API Key; the keys "+simulation+" and "+embeddings+" are not this project's"))
	job, err := e.svc.Analysis.AnalyzeCall(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.runDue()
	j, got := e.job(job.ID), e.call(c.ID)
	if j.Status != data.JobFailed || j.LastError == nil || got.AnalysisError == nil {
		t.Fatalf("after a 401: job %+v, the call's analysis_error %+v", j, got.AnalysisError)
	}
	for where, msg := range map[string]string{"the call's analysis_error": got.AnalysisError.Message, "the job's last_error": *j.LastError} {
		if !strings.Contains(msg, "Invalid API Key; the keys [redacted] and [redacted]") {
			t.Errorf("%s: %q, want the refusal with the keys scrubbed", where, msg)
		}
	}
}
