package server_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// The server decodes agent bodies into typed inputs, the agent service merges them and
// checks the rules: one 422 still names the decoder's faults (unknown, read-only and
// mistyped members) and the rules' faults (references included) at once, and nothing is
// stored.
func TestAgentBodiesReportDecodeAndRuleFaultsTogether(t *testing.T) {
	s := testkit.NewServer(t, nil)
	owner := testkit.AsOwner
	r := s.Do("POST", "/api/v1/agents", s.Owner.Token, `{"name":"Kept"}`)
	testkit.Expect(t, r, 201)
	id := r.Data()["id"].(string)
	s.Run(t, []testkit.Scenario{
		{Name: "create", Method: "POST", Path: "/api/v1/agents", Token: owner,
			Body:   `{"name":"","status":"published","llm_config":{"temperature":"hot","knowledge_base_ids":["kb_01JD6AAAAAAAAAAAAAAAAAAAAA"]},"call_config":{"ring_duration_ms":1}}`,
			Fields: []string{"name", "status", "llm_config.temperature", "llm_config.knowledge_base_ids.0", "call_config.ring_duration_ms"}},
		{Name: "update", Method: "PUT", Path: "/api/v1/agents/" + id, Token: owner,
			Body:   `{"nme":"x","tts_config":null,"llm_config":{"api_key":"****zzzz","max_tokens":0},"prompt_config":{"first_speaker":"bot"}}`,
			Fields: []string{"nme", "tts_config", "llm_config.api_key", "llm_config.max_tokens", "prompt_config.first_speaker"}},
		{Name: "publish", Method: "POST", Path: "/api/v1/agents/" + id + "/publish", Token: owner,
			Body: `{"description":"` + strings.Repeat("d", 1001) + `","notes":1}`, Fields: []string{"description", "notes"}},
		{Name: "nothing was stored", Method: "GET", Path: "/api/v1/agents/" + id, Token: owner, Status: 200,
			Check: func(t *testing.T, s *testkit.Server, r *testkit.Response) {
				if d := r.Data(); d["name"] != "Kept" || d["status"] != "draft" {
					t.Errorf("after refused changes: name %v, status %v", d["name"], d["status"])
				}
			}},
		{Name: "one agent", Method: "GET", Path: "/api/v1/agents", Token: owner, Status: 200,
			Check: func(t *testing.T, s *testkit.Server, r *testkit.Response) {
				if n := len(r.List()); n != 1 {
					t.Errorf("%d agents after a refused create, want 1", n)
				}
			}},
	})
}
