package service_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// A test run runs the draft as it was when the run was asked for (conventions §22): a
// draft edited while the run's case is under way is not what passed, so the publish
// gate stays closed on it (tests_required) and a publish stores no version; the edit
// undone, the same run opens the gate again. The hook edits the prompt as the case
// starts.
func TestDraftEditedDuringItsTestRunStaysUntested(t *testing.T) {
	stand := llmtest.New(t, data.LLMInternal)
	stand.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.Text("Welcome to the test kitchen.") })
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}))
	u := mustUser(t, svc, "ada@example.com")
	ctx := testkit.As(u)
	prompt := func(text string) data.AgentUpdate {
		return data.AgentUpdate{PromptConfig: data.Some(data.PromptConfigPatch{Prompt: data.Some(text)})}
	}
	agent, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Kitchen"), LLMConfig: data.Some(llmPatch(stand.LLMConfig())),
		PromptConfig: data.Some(data.PromptConfigPatch{FirstSpeaker: data.Some("user"), Prompt: data.Some("Greet warmly.")})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AgentTests.CreateAgentTest(ctx, agent.ID, data.AgentTestCreate{Name: "greets", RequiredForPublish: true,
		User: data.TestUser{Script: []string{"hello"}}, Criteria: []data.Criterion{{Type: data.CriterionSays, Pattern: "Welcome"}}}); err != nil {
		t.Fatal(err)
	}
	run, err := svc.TestRuns.StartTestRun(ctx, agent.ID, data.TestRunCreate{})
	if err != nil {
		t.Fatal(err)
	}
	svc.TestRuns.OnCase(func(string, string, int) {
		if _, err := svc.Agents.UpdateAgent(ctx, agent.ID, prompt("Greet coldly.")); err != nil {
			t.Error(err)
		}
	})
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindTestRun}, Jitter: noJitter})
	if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ran %d jobs: %v", n, err)
	}
	svc.TestRuns.OnCase(nil)
	if got, err := svc.TestRuns.TestRun(ctx, agent.ID, run.ID); err != nil || got.Status != data.TestPassed {
		t.Fatalf("the run = %+v, %v; want passed", got, err)
	}
	err = svc.Agents.PublishAgent(ctx, agent.ID, data.PublishRequest{})
	if data.ErrorCode(err) != data.ETESTSREQUIRED {
		t.Errorf("publishing the draft edited during its run = %v, want tests_required", err)
	}
	if a, err := svc.Agents.Agent(ctx, agent.ID); err != nil || a.PublishedVersion != nil {
		t.Errorf("after the refused publish: published version %v, %v; want none", a.PublishedVersion, err)
	}
	if _, err := svc.Agents.UpdateAgent(ctx, agent.ID, prompt("Greet warmly.")); err != nil {
		t.Fatal(err)
	}
	if err := svc.Agents.PublishAgent(ctx, agent.ID, data.PublishRequest{}); err != nil {
		t.Errorf("publishing the tested draft again: %v", err)
	}
}
