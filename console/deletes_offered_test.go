package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestNewDeletesOfferedToWritersOnly: a version's Delete and a finished campaign's Delete
// are offered to whoever may do them (the owner) and to nobody else: a read-only member
// of both modules is offered neither, and the server refuses its posts (403), the records
// kept; a developer limited to another agent meets neither record (404).
func TestNewDeletesOfferedToWritersOnly(t *testing.T) {
	e := testenv.Start(t)
	tok := e.Owner.Token
	agent := createAgent(t, e, tok, "Pruned")
	other := createAgent(t, e, tok, "Other")
	for _, a := range []string{agent, agent, other} { // agent: versions 1 and 2, 2 live
		if res := e.Do(nil, "POST", "/api/v1/agents/"+a+"/publish", tok, nil); res.Status != http.StatusNoContent {
			t.Fatalf("publish: %d %s", res.Status, res.Body)
		}
	}
	res := e.Do(nil, "POST", "/api/v1/numbers", tok, map[string]any{"phone_number": "+14155550100", "provider": "twilio"})
	if res.Status != http.StatusCreated {
		t.Fatalf("number: %d %s", res.Status, res.Body)
	}
	res = e.Do(nil, "POST", "/api/v1/campaigns", tok, map[string]any{"name": "Done", "agent_id": agent, "number_id": res.Data()["id"],
		"start_at": "2099-01-01T00:00:00Z", "max_concurrent": 1, "recipients": []any{map[string]any{"phone_number": "+14155550101"}},
		"window": map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, "start": "00:00", "end": "23:59"}})
	if res.Status != http.StatusCreated {
		t.Fatalf("campaign: %d %s", res.Status, res.Body)
	}
	campaign := res.Data()["id"].(string)
	if res := e.Do(nil, "POST", "/api/v1/campaigns/"+campaign+"/cancel", tok, nil); res.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", res.Status, res.Body)
	}
	versions, versionDelete := "/agents/"+agent+"/versions", "/agents/"+agent+"/versions/1/delete"
	page, campaignDelete := "/campaigns/"+campaign, "/campaigns/"+campaign+"/delete"

	owner := e.SignIn(e.Owner, "")
	if !strings.Contains(string(e.Do(owner.Client, "GET", versions, "", nil).Body), `href="`+versionDelete+`"`) ||
		!strings.Contains(string(e.Do(owner.Client, "GET", page, "", nil).Body), `href="`+campaignDelete+`"`) {
		t.Fatal("the owner is not offered the deletes: nothing below would prove anything")
	}

	reader := e.NewUser("reader@example.com", false)
	addMember(t, e, reader, map[string]any{"role": "member", "modules": []string{"agents", "call_history"}})
	s := e.SignIn(reader, e.Owner.WorkspaceID)
	if body := string(e.Do(s.Client, "GET", versions, "", nil).Body); !strings.Contains(body, "Pruned") || strings.Contains(body, versionDelete) {
		t.Errorf("a read-only member's versions page: shows the agent %v, offers the delete %v", strings.Contains(body, "Pruned"), strings.Contains(body, versionDelete))
	}
	if body := string(e.Do(s.Client, "GET", page, "", nil).Body); !strings.Contains(body, "Done") || strings.Contains(body, campaignDelete) {
		t.Errorf("a read-only member's campaign page: shows it %v, offers the delete %v", strings.Contains(body, "Done"), strings.Contains(body, campaignDelete))
	}
	csrf := e.CSRF(s)
	for _, path := range []string{versionDelete, campaignDelete} {
		if res := e.Do(s.Client, "POST", path, "", url.Values{"csrf_token": {csrf}}); res.Status != http.StatusForbidden {
			t.Errorf("a read-only member's POST %s: %d, want 403", path, res.Status)
		}
	}

	outsider := e.NewUser("outsider@example.com", false)
	addMember(t, e, outsider, map[string]any{"role": "developer", "modules": []string{"agents", "call_history"}, "agent_ids": []string{other}})
	o := e.SignIn(outsider, e.Owner.WorkspaceID)
	csrf = e.CSRF(o)
	for _, path := range []string{versions, page, versionDelete, campaignDelete} {
		if res := e.Do(o.Client, "GET", path, "", nil); res.Status != http.StatusNotFound {
			t.Errorf("a developer limited to another agent: GET %s: %d, want 404", path, res.Status)
		}
	}
	for _, path := range []string{versionDelete, campaignDelete} {
		if res := e.Do(o.Client, "POST", path, "", url.Values{"csrf_token": {csrf}}); res.Status != http.StatusNotFound {
			t.Errorf("a developer limited to another agent: POST %s: %d, want 404", path, res.Status)
		}
	}
	if res := e.Do(nil, "GET", "/api/v1/agents/"+agent+"/versions/1", tok, nil); res.Status != http.StatusOK {
		t.Errorf("version 1 after the refused deletes: %d", res.Status)
	}
	if res := e.Do(nil, "GET", "/api/v1/campaigns/"+campaign, tok, nil); res.Status != http.StatusOK {
		t.Errorf("the campaign after the refused deletes: %d", res.Status)
	}
}
