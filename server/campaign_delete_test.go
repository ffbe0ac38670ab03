package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// DELETE /api/v1/campaigns/{id}: 409 conflict while the campaign runs, and while canceled
// with its call in progress; 403 to a member (who may not cancel either), 404 to another
// workspace; 204 once finished, and then the campaign and its recipients are 404, a
// second delete too, while its call stays.
func TestCampaignDeleteHTTP(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	id := e.create(e.campaignBody([]string{"+14155550101"}, nil))
	tasks := e.claim(5)
	if len(tasks) != 1 {
		t.Fatalf("%d tasks claimed, want 1", len(tasks))
	}
	path := "/api/v1/campaigns/" + id
	conflict := func(want string) {
		t.Helper()
		r := e.Do("DELETE", path, e.Owner.Token, nil)
		testkit.Expect(t, r, 409)
		if r.Code() != data.ECONFLICT || !strings.Contains(r.JSON()["message"].(string), want) {
			t.Errorf("the 409: %s, want code conflict saying %q", r.Body, want)
		}
	}
	conflict("cancel it first")
	member := e.Member("member@example.com", e.ws, data.RoleMember, []string{data.ModuleCallHistory, data.ModuleAgents}, nil)
	testkit.Expect(t, e.Do("POST", path+"/cancel", member.Token, nil), 403)
	testkit.Expect(t, e.Do("POST", path+"/cancel", e.Owner.Token, nil), 200)
	conflict("still has 1 call in progress")
	e.end(tasks[0], "ended", "user_hangup")
	testkit.Expect(t, e.Do("DELETE", path, member.Token, nil), 403)
	stranger := e.NewUser("stranger@example.com", false)
	testkit.Expect(t, e.Do("DELETE", path, stranger.Token, nil), 404)
	if c := e.campaign(id); c["status"] != data.CampaignCanceled {
		t.Fatalf("after the refused deletes the campaign is %v", c["status"])
	}

	testkit.Expect(t, e.Do("DELETE", path, e.Owner.Token, nil), 204)
	testkit.Expect(t, e.Do("GET", path, e.Owner.Token, nil), 404)
	testkit.Expect(t, e.Do("GET", path+"/recipients", e.Owner.Token, nil), 404)
	testkit.Expect(t, e.Do("DELETE", path, e.Owner.Token, nil), 404)
	if l := e.Do("GET", "/api/v1/campaigns", e.Owner.Token, nil); len(l.List()) != 0 {
		t.Errorf("the list shows %d campaigns after the delete", len(l.List()))
	}
	call := tasks[0]["call"].(map[string]any)["id"].(string)
	testkit.Expect(t, e.Do("GET", "/api/v1/calls/"+call, e.Owner.Token, nil), 200)
}
