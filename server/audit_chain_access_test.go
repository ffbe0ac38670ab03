package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// The audit chain's head and its verification describe every event of the workspace (how
// many there are, the newest one's id, hash and time, each faulty event's id), so only a
// caller who may read every event gets them (data.NeedAuditChain; conventions §20: no
// token shows more than it holds). Before, a key with audit:read alone, or one lacking
// some module's read scope (and so the job kinds of that module), got both: more than its
// audit log page shows it.
func TestAuditChainNeedsEveryEvent(t *testing.T) {
	s := testkit.NewServer(t, nil)
	ws := s.Owner.WorkspaceID
	agent := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "A"}).Data()["id"].(string)
	everyRead := []string{data.ScopeAuditRead}
	for _, m := range data.Modules {
		everyRead = append(everyRead, data.ReadScope(m))
	}
	allowed := map[string]string{
		"owner":                    s.Owner.Token,
		"admin":                    s.TokenIn(s.Member("admin@example.com", ws, data.RoleAdmin, nil, nil), ws),
		"key with every scope":     ownerKey(t, s, map[string]any{"scopes": data.Scopes}),
		"key reading every module": keyWithScopes(t, s, everyRead...),
		"key writing every module": keyWithScopes(t, s, data.ScopeAuditRead, "agents:write", "knowledge_base:write", "phone_numbers:write", "call_history:write", "analytics:write"),
	}
	type refusal struct{ token, says string }
	refused := map[string]refusal{
		"key with audit:read alone": {keyWithScopes(t, s, data.ScopeAuditRead), "agents:read, knowledge_base:read, phone_numbers:read, call_history:read, analytics:read"},
		"key limited to one agent":  {keyWithAgents(t, s, agent), "limited to some agents"},
		"developer":                 {s.TokenIn(s.Member("dev@example.com", ws, data.RoleDeveloper, nil, nil), ws), "needs admin"},
	}
	refused["key of every scope, one agent"] = refusal{ownerKey(t, s, map[string]any{"scopes": data.Scopes, "agent_ids": []string{agent}}), "limited to some agents"}
	// A key lacking one module's read scope: that module's events, and the jobs of its
	// kinds (job.failed), are hidden from its audit log page.
	for i, m := range data.Modules {
		scopes := slices.Delete(slices.Clone(everyRead), i+1, i+2)
		refused["key without "+data.ReadScope(m)] = refusal{keyWithScopes(t, s, scopes...), "lacks the " + data.ReadScope(m) + " scope"}
	}
	for _, path := range []string{"/api/v1/audit-log/head", "/api/v1/audit-log/verify"} {
		for name, token := range allowed {
			if r := s.Do("GET", path, token, nil); r.Status != 200 {
				t.Errorf("%s as %s: %d %s; want 200", path, name, r.Status, r.Body)
			}
		}
		for name, c := range refused {
			r := s.Do("GET", path, c.token, nil)
			if r.Status != 403 || r.JSON()["code"] != data.EFORBIDDEN || !strings.Contains(r.JSON()["message"].(string), c.says) {
				t.Errorf("%s as %s: %d %s; want 403 forbidden saying %q", path, name, r.Status, r.Body, c.says)
			}
		}
	}
}

// ownerKey is a new API key of the owner's, made with body (its scopes, agent_ids).
func ownerKey(t *testing.T, s *testkit.Server, body map[string]any) string {
	t.Helper()
	body["name"] = "key"
	r := s.Do("POST", "/api/v1/api-keys", s.Owner.Token, body)
	testkit.Expect(t, r, 201)
	return r.JSON()["token"].(string)
}
