package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestConfirmationsOnlyForWhoMayAct: a destructive action's confirmation page, opened by
// its address by a user whose role may not do the action, is the 403 page its button
// would have led to, not a confirmation with that button; whoever may act gets the
// confirmation. Run on both engines.
func TestConfirmationsOnlyForWhoMayAct(t *testing.T) {
	e := testenv.Start(t)
	tok := e.Owner.Token
	agent := createAgent(t, e, tok, "Confirmed")
	for range 2 {
		if res := e.Do(nil, "POST", "/api/v1/agents/"+agent+"/publish", tok, nil); res.Status != http.StatusNoContent {
			t.Fatalf("publish: %d %s", res.Status, res.Body)
		}
	}
	create := func(path string, body map[string]any) string {
		t.Helper()
		res := e.Do(nil, "POST", path, tok, body)
		if res.Status != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", path, res.Status, res.Body)
		}
		return res.Data()["id"].(string)
	}
	number := create("/api/v1/numbers", map[string]any{"phone_number": "+14155550100", "provider": "twilio"})
	kb := create("/api/v1/knowledge-bases", map[string]any{"name": "FAQ"})
	webhook := create("/api/v1/webhooks", map[string]any{"url": "https://example.com/hook", "events": []string{"agent.created"}})
	reader := e.NewUser("reader@example.com", false)
	addMember(t, e, reader, map[string]any{"role": "member"})
	developer := e.NewUser("developer@example.com", false)
	addMember(t, e, developer, map[string]any{"role": "developer"})

	pages := map[string]string{ // confirmation → the weakest role that may act
		"/agents/" + agent + "/delete":                "developer",
		"/agents/" + agent + "/versions/1/restore":    "developer",
		"/agents/" + agent + "/versions/1/delete":     "developer",
		"/numbers/" + number + "/delete":              "developer",
		"/knowledge-bases/" + kb + "/delete":          "developer",
		"/webhooks/" + webhook + "/delete":            "owner",
		"/webhooks/" + webhook + "/rotate":            "owner",
		"/workspace/members/" + reader.ID + "/remove": "owner",
		"/workspace/delete":                           "owner",
	}
	owner, s, dev := e.SignIn(e.Owner, ""), e.SignIn(reader, e.Owner.WorkspaceID), e.SignIn(developer, e.Owner.WorkspaceID)
	for path, weakest := range pages {
		if res := e.Do(owner.Client, "GET", path, "", nil); res.Status != http.StatusOK || !strings.Contains(string(res.Body), `action="`+path+`"`) {
			t.Errorf("the owner's GET %s: %d, a form posting there %v", path, res.Status, strings.Contains(string(res.Body), `action="`+path+`"`))
		}
		for who, c := range map[string]*testenv.Session{"member": s, "developer": dev} {
			res := e.Do(c.Client, "GET", path, "", nil)
			offered := strings.Contains(string(res.Body), `action="`+path+`"`)
			if may := who == "developer" && weakest == "developer"; may != (res.Status == http.StatusOK && offered) {
				t.Errorf("the %s's GET %s: %d, a form posting there %v; want the confirmation only if the role may act (%v)", who, path, res.Status, offered, may)
			}
			if res.Status == http.StatusForbidden && !strings.Contains(string(res.Body), "Not allowed") {
				t.Errorf("the %s's GET %s: a 403 that is not the console's page:\n%s", who, path, res.Body)
			}
		}
	}
}
