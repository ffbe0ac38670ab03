package service_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// TestTestRunCaseErrorIsScrubbedOfTheWorkspaceKeys: the agent's model refusing a test
// case with a message that quotes a credential its client was not given (the model
// client scrubs only its own key) leaves it out of the case's error, which every reader
// of the run sees: here the workspace's simulation and embeddings keys.
func TestTestRunCaseErrorIsScrubbedOfTheWorkspaceKeys(t *testing.T) {
	stand := llmtest.New(t, data.LLMInternal)
	env := testkit.New(t, nil)
	svc := env.Svc
	svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}))
	ctx := owner(t, env, "scrub@example.com")
	const (
		simulation = "gsk_simulation_0p9o8i7u6y5t4r"
		embeddings = "emb_key_3e4r5t6y7u8i9o0p1a2s"
	)
	agent, run := greetsRun(t, svc, ctx, data.AgentCreate{Name: data.Some("Kitchen"), LLMConfig: data.Some(llmPatch(stand.LLMConfig()))})
	if _, err := svc.Workspaces.UpdateWorkspace(ctx, agent.WorkspaceID, decode[data.WorkspaceUpdate](t, `{
		"embeddings":{"base_url":"https://embed.example.com/v1","model":"text-embedding-3-small","api_key":"`+embeddings+`"},
		"simulation":{"provider":"groq","model":"llama-3.3-70b-versatile","api_key":"`+simulation+`"}}`)); err != nil {
		t.Fatal(err)
	}
	stand.Queue(llmtest.Fail(401, "Invalid API Key; the keys "+simulation+" and "+embeddings+" are not this project's"))
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindTestRun}, Jitter: noJitter})
	if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ran %d jobs: %v", n, err)
	}
	got, err := svc.TestRuns.TestRun(ctx, agent.ID, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	shown, _ := json.Marshal(got)
	if got.Status != data.TestError || !strings.Contains(string(shown), "Invalid API Key; the keys [redacted] and [redacted]") {
		t.Fatalf("run %s; want error, its case's refusal told with the keys scrubbed", shown)
	}
	for _, s := range []string{simulation, embeddings} {
		if strings.Contains(string(shown), s[len(s)-8:]) {
			t.Errorf("the run shows %s: %s", s, shown)
		}
	}
}
