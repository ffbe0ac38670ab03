package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestSuppressionListLimitedMember: a member limited to some agents may add to the
// suppression list but is offered no removal, and a removal posted anyway is the API's
// 403 on the error page, leaving the entry listed; a member who may only read sees the
// list without a form; the forms refuse a post without the CSRF token.
func TestSuppressionListLimitedMember(t *testing.T) {
	e := testenv.Start(t)
	agent := createAgent(t, e, e.Owner.Token, "Desk")
	res := e.Do(nil, "POST", "/api/v1/suppressions", e.Owner.Token, map[string]any{"phone_number": "+14155550120", "reason": "asked"})
	if res.Status != http.StatusCreated {
		t.Fatalf("add: %d %s", res.Status, res.Body)
	}
	id := res.Data()["id"].(string)

	grace := e.NewUser("grace@example.com", false)
	addMember(t, e, grace, map[string]any{"role": "developer", "modules": []string{"call_history", "agents"}, "agent_ids": []string{agent}})
	s := e.SignIn(grace, e.Owner.WorkspaceID)
	page := string(e.Do(s.Client, "GET", "/suppressions", "", nil).Body)
	if !strings.Contains(page, "14155550120") || !strings.Contains(page, `action="/suppressions"`) {
		t.Errorf("a limited member's list: shows the number %v, offers adding %v", strings.Contains(page, "14155550120"), strings.Contains(page, `action="/suppressions"`))
	}
	if strings.Contains(page, "/suppressions/"+id+"/delete") || !strings.Contains(page, "suppression-limited") {
		t.Errorf("a limited member is offered removal, or not told why not")
	}
	csrf := e.CSRF(s)
	if res := e.Do(s.Client, "POST", "/suppressions/"+id+"/delete", "", url.Values{"csrf_token": {csrf}}); res.Status != http.StatusForbidden ||
		!strings.Contains(string(res.Body), "limited to some agents") {
		t.Errorf("removal by a limited member: %d %s", res.Status, res.Body)
	}
	if res := e.Do(s.Client, "POST", "/suppressions", "", url.Values{"csrf_token": {csrf}, "phone_number": {"+14155550121"}}); res.Status != http.StatusSeeOther {
		t.Errorf("adding by a limited member: %d %s", res.Status, res.Body)
	}
	if res := e.Do(s.Client, "POST", "/suppressions/"+id+"/delete", "", url.Values{}); res.Status != http.StatusForbidden {
		t.Errorf("removal without the CSRF token: %d", res.Status)
	}
	list := e.Do(nil, "GET", "/api/v1/suppressions", e.Owner.Token, nil)
	if n := len(list.JSON()["data"].([]any)); n != 2 {
		t.Errorf("the list holds %d entries, want the first kept and the second added", n)
	}

	dan := e.NewUser("dan@example.com", false)
	addMember(t, e, dan, map[string]any{"role": "member", "modules": []string{"call_history"}})
	d := e.SignIn(dan, e.Owner.WorkspaceID)
	page = string(e.Do(d.Client, "GET", "/suppressions", "", nil).Body)
	if !strings.Contains(page, "14155550120") || strings.Contains(page, "<form") && strings.Contains(page, `action="/suppressions`) {
		t.Errorf("a read-only member's list: shows the number %v, offers a form %v", strings.Contains(page, "14155550120"), strings.Contains(page, `action="/suppressions`))
	}
	if res := e.Do(d.Client, "POST", "/suppressions", "", url.Values{"csrf_token": {e.CSRF(d)}, "phone_number": {"+14155550122"}}); res.Status != http.StatusForbidden {
		t.Errorf("adding by a read-only member: %d", res.Status)
	}
}
