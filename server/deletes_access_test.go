package server_test

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestNewDeletesFollowTheRule: DELETE /campaigns/{id} and DELETE /agents/{id}/versions/{n}
// answer each caller as conventions §2, §6 and §20 say: 403 to a role, module or scope
// that may not write there; 404 to a caller limited to another agent (a member's
// agent_ids, or an owner's key narrowed to it), word for word the answer for a campaign
// or an agent that never existed; and the record stays. A caller limited to the record's agent deletes it.
func TestNewDeletesFollowTheRule(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	other := e.publishedAgent("Other desk")
	campaign := func() string {
		id := e.create(e.campaignBody([]string{"+14155550101"}, map[string]any{"start_at": "2099-01-01T00:00:00Z"}))
		testkit.Expect(t, e.Do("POST", "/api/v1/campaigns/"+id+"/cancel", e.Owner.Token, nil), 200)
		return id
	}
	for range 3 { // versions 1 to 4, the 4th published: 1 to 3 may go
		testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+e.agent+"/publish", e.Owner.Token, nil), 204)
	}
	key := func(name string, body map[string]any) string {
		body["name"] = name
		r := e.Do("POST", "/api/v1/api-keys", e.Owner.Token, body)
		testkit.Expect(t, r, 201)
		return r.JSON()["token"].(string)
	}
	member := func(email, role string, modules, agents []string) string {
		return e.Member(email, e.ws, role, modules, agents).Token
	}
	both := []string{data.ModuleAgents, data.ModuleCallHistory}
	// Each row's answer on the campaign's delete and the version's; 0 where the caller
	// may delete (not tried: the insider below does).
	refused := []struct {
		name           string
		token          string
		campaign, vers int
	}{
		{"member", member("member@example.com", data.RoleMember, data.Modules, nil), 403, 403},
		{"developer without call_history", member("noch@example.com", data.RoleDeveloper, []string{data.ModuleAgents}, nil), 403, 0},
		{"developer without agents", member("noag@example.com", data.RoleDeveloper, []string{data.ModuleCallHistory}, nil), 0, 403},
		{"developer limited to the other agent", member("outsider@example.com", data.RoleDeveloper, both, []string{other}), 404, 404},
		{"owner's key narrowed to the other agent", key("narrow", map[string]any{"agent_ids": []string{other}}), 404, 404},
		{"owner's key with read scopes", key("reader", map[string]any{"scopes": []string{"agents:read", "call_history:read"}}), 403, 403},
		{"owner's key with call_history:write alone", key("calls", map[string]any{"scopes": []string{"call_history:write"}}), 0, 403},
		{"owner's key with agents:write alone", key("agents", map[string]any{"scopes": []string{"agents:write"}}), 403, 0},
	}
	c := campaign()
	campaignPath, versionPath := "/api/v1/campaigns/"+c, "/api/v1/agents/"+e.agent+"/versions/1"
	unknown := map[string]*testkit.Response{
		campaignPath: e.Do("DELETE", "/api/v1/campaigns/cmp_00000000000000000000000000", e.Owner.Token, nil),
		versionPath:  e.Do("DELETE", "/api/v1/agents/agt_00000000000000000000000000/versions/1", e.Owner.Token, nil),
	}
	for _, r := range refused {
		for path, want := range map[string]int{campaignPath: r.campaign, versionPath: r.vers} {
			if want == 0 {
				continue
			}
			res := e.Do("DELETE", path, r.token, nil)
			if res.Status != want {
				t.Errorf("%s: DELETE %s: %d %s, want %d", r.name, path, res.Status, res.Body, want)
				continue
			}
			if want == 404 && string(res.Body) != string(unknown[path].Body) {
				t.Errorf("%s: DELETE %s: %s; want the answer for an unknown id, %s", r.name, path, res.Body, unknown[path].Body)
			}
			testkit.Expect(t, e.Do("GET", path, e.Owner.Token, nil), 200)
		}
	}
	insider := member("insider@example.com", data.RoleDeveloper, both, []string{e.agent})
	testkit.Expect(t, e.Do("DELETE", campaignPath, insider, nil), 204)
	testkit.Expect(t, e.Do("DELETE", versionPath, insider, nil), 204)
}
