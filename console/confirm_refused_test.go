package console_test

import (
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/internal/testkit"
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

// TestConfirmationsOfRecordsOfHiddenAgentsAreRefused: a developer limited to agent A may
// write knowledge bases and numbers, but not one that agent B, hidden from them, uses
// (the API's 403, service checkKnowledgeBaseWritable and checkNumberWritable). The
// delete confirmations of such a knowledge base, of one of its sources and of such a
// number, opened by their address, are the 403 their button would lead to, in the API's
// words and naming no hidden agent, not a confirmation; those of the developer's own
// agent's records are confirmations. Run on both engines.
func TestConfirmationsOfRecordsOfHiddenAgentsAreRefused(t *testing.T) {
	e := testenv.Start(t)
	tok := e.Owner.Token
	kb := func(name string) (id, text string) {
		res := e.Do(nil, "POST", "/api/v1/knowledge-bases", tok, map[string]any{"name": name,
			"texts": []any{map[string]any{"title": "Hours", "content": "We open at nine."}}})
		if res.Status != http.StatusCreated {
			t.Fatalf("knowledge base: %d %s", res.Status, res.Body)
		}
		return res.Data()["id"].(string), res.Data()["texts"].([]any)[0].(map[string]any)["id"].(string)
	}
	ofMine, mineText := kb("Alpha facts")
	ofOther, otherText := kb("Bravo facts")
	agent := func(name, kbID string) string {
		res := e.Do(nil, "POST", "/api/v1/agents", tok, map[string]any{"name": name, "llm_config": map[string]any{"knowledge_base_ids": []string{kbID}}})
		if res.Status != http.StatusCreated {
			t.Fatalf("agent: %d %s", res.Status, res.Body)
		}
		return res.Data()["id"].(string)
	}
	mine, other := agent("Alpha line", ofMine), agent("Bravo line", ofOther)
	mineNumber, otherNumber := numberAnsweredBy(t, e, "+14155550101", mine), numberAnsweredBy(t, e, "+14155550102", other)
	dev := e.NewUser("limited@example.com", false)
	addMember(t, e, dev, map[string]any{"role": "developer", "agent_ids": []string{mine}})
	s := e.SignIn(dev, e.Owner.WorkspaceID)
	devToken := testkit.APIKey(t, cli.NewServices(e.DB), dev.ID, e.Owner.WorkspaceID)

	pages := []struct {
		page, api string
		refused   bool
	}{
		{"/knowledge-bases/" + ofMine + "/delete", "", false},
		{"/knowledge-bases/" + ofMine + "/sources/texts/" + mineText + "/delete", "", false},
		{"/numbers/" + mineNumber + "/delete", "", false},
		{"/knowledge-bases/" + ofOther + "/delete", "/api/v1/knowledge-bases/" + ofOther, true},
		{"/knowledge-bases/" + ofOther + "/sources/texts/" + otherText + "/delete", "/api/v1/knowledge-bases/" + ofOther + "/sources/delete/texts/" + otherText, true},
		{"/numbers/" + otherNumber + "/delete", "/api/v1/numbers/" + otherNumber, true},
	}
	for _, p := range pages {
		res := e.Do(s.Client, "GET", p.page, "", nil)
		body := string(res.Body)
		offered := strings.Contains(body, `action="`+p.page+`"`)
		if !p.refused {
			if res.Status != http.StatusOK || !offered {
				t.Errorf("GET %s: %d, a form posting there %v; want the confirmation", p.page, res.Status, offered)
			}
			continue
		}
		if res.Status != http.StatusForbidden || offered || !strings.Contains(body, "Not allowed") {
			t.Errorf("GET %s: %d, a form posting there %v; want the console's 403 page", p.page, res.Status, offered)
		}
		for _, hidden := range []string{other, "Bravo line"} {
			if strings.Contains(body, hidden) {
				t.Errorf("GET %s names the hidden agent (%s)", p.page, hidden)
			}
		}
		// The page says what the API says when the button's DELETE is sent.
		api := e.Do(nil, "DELETE", p.api, devToken, nil)
		if api.Status != http.StatusForbidden {
			t.Fatalf("DELETE %s by the developer: %d %s", p.api, api.Status, api.Body)
		}
		msg, _ := api.JSON()["message"].(string)
		if msg == "" || !strings.Contains(html.UnescapeString(body), msg) {
			t.Errorf("GET %s does not say the API's refusal %q:\n%s", p.page, msg, body)
		}
	}
	for _, id := range []string{ofOther} {
		if res := e.Do(nil, "GET", "/api/v1/knowledge-bases/"+id, tok, nil); res.Status != http.StatusOK || len(res.Data()["texts"].([]any)) != 1 {
			t.Errorf("knowledge base %s after the refusals: %d %s", id, res.Status, res.Body)
		}
	}
	if res := e.Do(nil, "GET", "/api/v1/numbers/"+otherNumber, tok, nil); res.Status != http.StatusOK {
		t.Errorf("number after the refusals: %d", res.Status)
	}
}
