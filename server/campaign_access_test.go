package server_test

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// A campaign belongs to its agent: a member limited to another agent neither sees it nor
// moves it, nor creates one with it, and claims no task of it; the suppression list
// refuses such a member's delete. A member with the agent does all of it.
func TestCampaignBelongsToItsAgent(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	other := e.publishedAgent("Other desk")
	id := e.create(e.campaignBody([]string{"+14155550101"}, nil))
	mods := []string{data.ModuleCallHistory, data.ModuleAgents}
	outsider := e.Member("outsider@example.com", e.ws, data.RoleDeveloper, mods, []string{other})
	insider := e.Member("insider@example.com", e.ws, data.RoleDeveloper, mods, []string{e.agent})

	testkit.Expect(t, e.Do("GET", "/api/v1/campaigns/"+id, outsider.Token, nil), 404)
	testkit.Expect(t, e.Do("POST", "/api/v1/campaigns/"+id+"/pause", outsider.Token, nil), 404)
	if l := e.Do("GET", "/api/v1/campaigns", outsider.Token, nil); len(l.List()) != 0 {
		t.Errorf("the outsider lists %d campaigns", len(l.List()))
	}
	// The number too: the agent's open campaign dials from it (numbers.md).
	testkit.ExpectFields(t, e.Do("POST", "/api/v1/campaigns", outsider.Token, e.campaignBody([]string{"+14155550102"}, nil)), "agent_id", "number_id")
	r := e.Do("POST", "/api/v1/dial-tasks/claim", outsider.Token, map[string]any{"max": 5})
	testkit.Expect(t, r, 200)
	if n := len(r.Data()["tasks"].([]any)); n != 0 {
		t.Fatalf("the outsider claimed %d tasks of another agent's campaign", n)
	}
	r = e.Do("POST", "/api/v1/suppressions", outsider.Token, map[string]any{"phone_number": "+14155550199"})
	testkit.Expect(t, r, 201)
	testkit.Expect(t, e.Do("DELETE", "/api/v1/suppressions/"+r.Data()["id"].(string), outsider.Token, nil), 403)

	testkit.Expect(t, e.Do("GET", "/api/v1/campaigns/"+id, insider.Token, nil), 200)
	r = e.Do("POST", "/api/v1/dial-tasks/claim", insider.Token, map[string]any{"max": 5})
	testkit.Expect(t, r, 200)
	if n := len(r.Data()["tasks"].([]any)); n != 1 {
		t.Fatalf("the insider claimed %d tasks, want 1", n)
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/campaigns/"+id+"/pause", insider.Token, nil), 200)

	// Deleting the agent cancels its open campaign; the campaign stays.
	testkit.Expect(t, e.Do("DELETE", "/api/v1/agents/"+e.agent, e.Owner.Token, nil), 204)
	if c := e.campaign(id); c["status"] != "canceled" {
		t.Fatalf("the deleted agent's campaign: %v", c["status"])
	}
}
