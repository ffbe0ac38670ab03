package server_test

import (
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// BenchmarkWorkspaceExport: GET /export of a workspace of 200 agents with two versions
// each and 50 numbers, through HTTP.
func BenchmarkWorkspaceExport(b *testing.B) {
	s := testkit.NewServer(b, nil)
	tok := s.Owner.Token
	for i := range 200 {
		r := s.Do("POST", "/api/v1/agents", tok, map[string]any{"name": fmt.Sprint("Agent ", i), "llm_config": map[string]any{"api_key": "gsk_bench_key_1234"}})
		testkit.Expect(b, r, 201)
		id := r.Data()["id"].(string)
		for range 2 {
			testkit.Expect(b, s.Do("POST", "/api/v1/agents/"+id+"/publish", tok, nil), 204)
		}
		if i < 50 {
			testkit.Expect(b, s.Do("POST", "/api/v1/numbers", tok, map[string]any{"phone_number": fmt.Sprintf("+1415555%04d", i), "provider": "sip", "inbound_agent_id": id}), 201)
		}
	}
	path := "/api/v1/workspaces/" + s.Owner.WorkspaceID + "/export"
	b.ResetTimer()
	for b.Loop() {
		testkit.Expect(b, s.Do("GET", path, tok, nil), 200)
	}
}
