package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestAgentListRefusedFilterAboveTheList: a hand-edited filter or page of the agents list
// (?status=weird, a name over 255 characters, a tampered cursor) was an error page
// ("Something went wrong", the API's 422); it is the API's message above the list, as on
// the other lists, and never beside the create form's name field.
func TestAgentListRefusedFilterAboveTheList(t *testing.T) {
	e := testenv.Start(t)
	createAgent(t, e, e.Owner.Token, "Alpha line")
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	for q, want := range map[string]string{
		"status=weird":                     "The selected status is invalid",
		"name=" + strings.Repeat("a", 300): "Name must not be greater than 255 characters.",
		"cursor=tampered":                  "Page is malformed",
	} {
		res := e.Do(s.Client, "GET", "/agents?"+q, "", nil)
		page := string(res.Body)
		if res.Status != http.StatusOK {
			t.Errorf("/agents?%.20s: %d, want 200", q, res.Status)
			continue
		}
		if !strings.Contains(page, `<div class="alert" role="alert"><p>`+want) {
			t.Errorf("/agents?%.20s does not say %q above the list:\n%s", q, want, page)
		}
		if strings.Contains(page, `id="new-agent-name-err"`) || strings.Contains(page, `aria-describedby="new-agent-name-err"`) {
			t.Errorf("/agents?%.20s marks the create form's name field", q)
		}
		if !strings.Contains(page, `<form method="post" action="/agents"`) {
			t.Errorf("/agents?%.20s has no create form", q)
		}
	}
	// A name the create form refuses is still beside that field.
	res := e.Do(s.Client, "POST", "/agents", "", url.Values{"csrf_token": {e.CSRF(s)}, "name": {strings.Repeat("b", 300)}})
	if res.Status != http.StatusUnprocessableEntity || !strings.Contains(string(res.Body), `id="new-agent-name-err"`) {
		t.Errorf("create with a long name: %d, message beside the field: %v", res.Status, strings.Contains(string(res.Body), `id="new-agent-name-err"`))
	}
}

// TestDiffOfNoVersionIsNotFound: a diff's address cut short (/diff, /diff?a=1&b=) or
// hand-edited (a=1/..) asked the API for a route it has not, and the page showed the
// API's "No route matches GET /api/v1/…"; it is the console's Page not found, and a
// missing "with" side is the draft, as the form's "Draft" is.
func TestDiffOfNoVersionIsNotFound(t *testing.T) {
	e := testenv.Start(t)
	id := createAgent(t, e, e.Owner.Token, "Alpha line")
	if res := e.Do(nil, "POST", "/api/v1/agents/"+id+"/publish", e.Owner.Token, map[string]any{}); res.Status/100 != 2 {
		t.Fatalf("publish: %d %s", res.Status, res.Body)
	}
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	for _, q := range []string{"", "?a=", "?b=current", "?a=1%2F..&b=current", "?a=0&b=current", "?a=1&b=x"} {
		res := e.Do(s.Client, "GET", "/agents/"+id+"/diff"+q, "", nil)
		if page := string(res.Body); res.Status != http.StatusNotFound || strings.Contains(page, "/api/v1") || !strings.Contains(page, "Page not found") {
			t.Errorf("/diff%s: %d, want the console's Page not found:\n%s", q, res.Status, page)
		}
	}
	if res := e.Do(s.Client, "GET", "/agents/"+id+"/diff?a=1&b=", "", nil); res.Status != http.StatusOK || !strings.Contains(string(res.Body), "Version 1 compared with Draft") {
		t.Errorf("/diff?a=1&b=: %d, want version 1 with the draft", res.Status)
	}
}
