package service_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestAgentUpdateAfterAnotherProcessWrote: an update merges into the row as stored now,
// never into the row this process kept from its own last write (agentRowCache), when
// another process (a second set of services on the same store, with caches of its own)
// wrote the agent in between; and a run of updates served from the kept row stores what
// a process without it reads back, api_key included.
func TestAgentUpdateAfterAnotherProcessWrote(t *testing.T) {
	env := testkit.New(t, nil)
	ctx := owner(t, env, "rows@example.com")
	here, there := env.Svc.Agents, testkit.Services(t, env.Store, nil).Agents
	a := mustAgent(t, ctx, here, `{"name":"A0","llm_config":{"provider":"groq","model":"llama-3.3-70b-versatile","api_key":"gsk_test_0123456789abcdef"},"prompt_config":{"prompt":"First."}}`)
	put := func(who string, body string) *data.Agent {
		t.Helper()
		svc := here
		if who == "there" {
			svc = there
		}
		out, err := svc.UpdateAgent(ctx, a.ID, decode[data.AgentUpdate](t, body))
		if err != nil {
			t.Fatalf("%s: %s: %v", who, body, err)
		}
		return out
	}
	put("here", `{"name":"A1"}`)                                                 // kept here
	put("here", `{"prompt_config":{"prompt":"Second."}}`)                        // merged into the kept row
	put("there", `{"prompt_config":{"prompt":"Changed elsewhere."}}`)            // here's row is stale now
	if err := there.PublishAgent(ctx, a.ID, data.PublishRequest{}); err != nil { // and again
		t.Fatal(err)
	}
	got := put("here", `{"name":"A3"}`)
	if got.Name != "A3" || got.PromptConfig.Prompt != "Changed elsewhere." || got.Status != data.AgentStatusDraft || got.PublishedVersion == nil || *got.PublishedVersion != 1 {
		t.Errorf("after another process's write: name %q, prompt %q, status %s, published %v", got.Name, got.PromptConfig.Prompt, got.Status, got.PublishedVersion)
	}
	got = put("here", `{"call_config":{"max_call_duration_ms":600000}}`)
	fresh, err := testkit.Services(t, env.Store, nil).Agents.Agent(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, _ := got.AppendJSON(nil)
	freshJSON, _ := fresh.AppendJSON(nil)
	if string(gotJSON) != string(freshJSON) {
		t.Errorf("the last update answered\n%s\nbut storage holds\n%s", gotJSON, freshJSON)
	}
	if fresh.LLMConfig.APIKey == nil || *fresh.LLMConfig.APIKey != data.MaskSecret("gsk_test_0123456789abcdef") {
		t.Errorf("api_key after updates served from the kept row: %v", fresh.LLMConfig.APIKey)
	}
}
