package server_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
)

// conversationTurn checks conversations.md's turn against a turn like it: the agent
// reads its knowledge base, calls note_plan (an extraction) and answers.
func conversationTurn(e *docEnv, t *testing.T, reqs []docRequest) {
	fixture := &llmtest.Fixture{
		Agent:        []llmtest.Rule{{When: "pro plan", Reply: llmtest.Calls(llm.ToolCall{Name: "note_plan", Arguments: `{"plan":"pro"}`})}},
		AgentDefault: llmtest.Text("How can I help?"),
		AfterTools:   llmtest.Text("The pro plan costs 20 euros a month."),
	}
	e.stand.Respond(fixture.Respond)
	r := e.Do("POST", "/api/v1/knowledge-bases", e.tok, map[string]any{"name": "Plans",
		"texts": []any{map[string]any{"title": "Prices", "content": "The pro plan costs 20 euros a month."}}})
	testkit.Expect(t, r, 201)
	agent := e.createAgent(t, map[string]any{"name": "Plans desk",
		"llm_config": e.llmConfig(map[string]any{"knowledge_base_ids": []any{r.Data()["id"]},
			"tools": []any{map[string]any{"name": "note_plan", "type": "extract_dynamic_variable",
				"variables": []any{map[string]any{"type": "string", "name": "plan", "description": "The plan asked about"}}}}}),
		"prompt_config": map[string]any{"prompt": "You sell plans.", "welcome_message": "Hello!"}})
	id := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	r = e.Do("POST", "/api/v1/conversations/"+id+"/messages", e.tok, map[string]any{"content": "How much is the pro plan?"})
	testkit.Expect(t, r, 200)
	expectShape(t, reqs[0].body, r, true)
}
