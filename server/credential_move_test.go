package server_test

import (
	"testing"
)

// TestKeptKeyDoesNotFollowANewAddress: a stored provider key kept (sent back masked, or
// not sent) while its provider's address moves to another origin is refused, so that
// whoever may edit the address but never read the key cannot have it sent to a server of
// theirs; the key given again, or a move on the same origin, is accepted. For an agent's
// llm_config, the workspace's simulation model and its embeddings provider.
func TestKeptKeyDoesNotFollowANewAddress(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	ws := "/api/v1/workspaces/" + e.Owner.WorkspaceID
	const key, mask = "sk-provider-key-0123456789", "****6789"

	llm := func(provider, urlField, url string, apiKey any, withKey bool) map[string]any {
		c := map[string]any{"provider": provider, urlField: url, "temperature": 0.5}
		if provider == "azure" {
			c["deployment"], c["api_version"] = "gpt-4o", "2024-06-01"
		} else {
			c["model"] = "llama3"
		}
		if withKey {
			c["api_key"] = apiKey
		}
		return c
	}
	r := e.do("POST", "/api/v1/agents", tok, map[string]any{"name": "Keyed",
		"llm_config": llm("internal", "base_url", "https://llm.example.com/v1", key, true)})
	expect(t, r, 201)
	agent := "/api/v1/agents/" + r.Data()["id"].(string)
	expect(t, e.do("PUT", ws, tok, map[string]any{
		"simulation": llm("azure", "endpoint", "https://sim.example.com", key, true),
		"embeddings": map[string]any{"base_url": "https://embed.example.com/v1", "model": "e5", "api_key": key},
	}), 200)

	for _, c := range []struct {
		name, path, field string
		body              map[string]any
		ok                bool
	}{
		{"agent, key not sent, other host", agent, "llm_config.api_key",
			map[string]any{"llm_config": map[string]any{"base_url": "https://attacker.example.net/v1"}}, false},
		{"agent, mask sent, other scheme", agent, "llm_config.api_key",
			map[string]any{"llm_config": llm("internal", "base_url", "http://llm.example.com/v1", mask, true)}, false},
		{"agent, mask sent, other port", agent, "llm_config.api_key",
			map[string]any{"llm_config": llm("internal", "base_url", "https://llm.example.com:8443/v1", mask, true)}, false},
		{"simulation, mask sent, other endpoint", ws, "simulation.api_key",
			map[string]any{"simulation": llm("azure", "endpoint", "https://attacker.example.net", mask, true)}, false},
		{"simulation, mask sent, other provider", ws, "simulation.api_key",
			map[string]any{"simulation": llm("internal", "base_url", "https://sim.example.com/v1", mask, true)}, false},
		{"embeddings, key not sent, other host", ws, "embeddings.api_key",
			map[string]any{"embeddings": map[string]any{"base_url": "https://attacker.example.net/v1"}}, false},
		{"embeddings, mask sent, other host", ws, "embeddings.api_key",
			map[string]any{"embeddings": map[string]any{"base_url": "https://attacker.example.net/v1", "api_key": mask}}, false},
		// Accepted: the same origin (a path, case or default port changed), or the key again.
		{"agent, same origin", agent, "",
			map[string]any{"llm_config": llm("internal", "base_url", "https://LLM.example.com:443/v2", mask, true)}, true},
		{"simulation, same origin", ws, "",
			map[string]any{"simulation": llm("azure", "endpoint", "https://sim.example.com/", mask, true)}, true},
		{"embeddings, same origin", ws, "",
			map[string]any{"embeddings": map[string]any{"base_url": "https://embed.example.com/v2"}}, true},
		{"agent, key again", agent, "",
			map[string]any{"llm_config": llm("internal", "base_url", "https://elsewhere.example.org/v1", key, true)}, true},
		{"simulation, key again", ws, "",
			map[string]any{"simulation": llm("azure", "endpoint", "https://elsewhere.example.org", key, true)}, true},
		{"embeddings, key again", ws, "",
			map[string]any{"embeddings": map[string]any{"base_url": "https://elsewhere.example.org/v1", "api_key": key}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.do("GET", c.path, tok, nil)
			r := e.do("PUT", c.path, tok, c.body)
			if c.ok {
				expect(t, r, 200)
				return
			}
			expectFields(t, r, c.field)
			if after := e.do("GET", c.path, tok, nil); string(after.Body) != string(before.Body) {
				t.Errorf("a refused update changed the record:\nbefore %s\nafter  %s", before.Body, after.Body)
			}
		})
	}
}
