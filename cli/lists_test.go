package cli_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestAgentAndNumberListCommands: `voiceapi agent list --knowledge-base` lists only the
// agents using it, `voiceapi number list --q` only the numbers found, as the API filters.
func TestAgentAndNumberListCommands(t *testing.T) {
	s := newTestServer(t)
	kb := s.Do("POST", "/api/v1/knowledge-bases", s.Owner.Token, map[string]any{"name": "Docs"})
	testkit.Expect(t, kb, 201)
	kbID := kb.Data()["id"].(string)
	testkit.Expect(t, s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Uses docs", "llm_config": map[string]any{"knowledge_base_ids": []string{kbID}}}), 201)
	testkit.Expect(t, s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Plain"}), 201)
	for _, n := range [][2]string{{"+14155550123", "Front desk"}, {"+33142000000", "Paris"}} {
		testkit.Expect(t, s.Do("POST", "/api/v1/numbers", s.Owner.Token, map[string]any{"phone_number": n[0], "nickname": n[1], "provider": "sip"}), 201)
	}

	out, err := s.voiceapi(t, "agent", "list", "--knowledge-base", kbID)
	if err != nil || !strings.Contains(out, "Uses docs") || strings.Contains(out, "Plain") {
		t.Errorf("agent list --knowledge-base: %v\n%s", err, out)
	}
	out, err = s.voiceapi(t, "agent", "list")
	if err != nil || !strings.Contains(out, "Uses docs") || !strings.Contains(out, "Plain") {
		t.Errorf("agent list: %v\n%s", err, out)
	}
	out, err = s.voiceapi(t, "number", "list", "--q", "+1 415")
	if err != nil || !strings.Contains(out, "Front desk") || strings.Contains(out, "Paris") {
		t.Errorf("number list --q: %v\n%s", err, out)
	}
	out, err = s.voiceapi(t, "number", "list", "--json")
	if err != nil || strings.Count(out, "\n") != 2 {
		t.Errorf("number list --json: %v\n%s", err, out)
	}
}
