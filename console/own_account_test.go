package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/data"
)

// TestOwnAccountDeleteRefused: the users list offers an administrator every account's
// delete but their own; their own delete's confirmation, opened by its address, shows
// the API's refusal (422) and no button, and a post to it anyway shows the refusal again
// with the account kept. Another administrator's confirmation offers the button.
func TestOwnAccountDeleteRefused(t *testing.T) {
	e := testenv.Start(t)
	ada := e.NewUser("ada@example.com", true)
	s := e.SignIn(e.Owner, "")
	own, others := "/users/"+e.Owner.ID+"/delete", "/users/"+ada.ID+"/delete"
	const button = `>Delete account</button>`
	if list := string(e.Do(s.Client, "GET", "/users", "", nil).Body); strings.Contains(list, `href="`+own+`"`) || !strings.Contains(list, `href="`+others+`"`) {
		t.Errorf("the users list offers the own delete %v, ada's %v", strings.Contains(list, `href="`+own+`"`), strings.Contains(list, `href="`+others+`"`))
	}
	if res := e.Do(s.Client, "GET", others, "", nil); res.Status != http.StatusOK || !strings.Contains(string(res.Body), button) {
		t.Fatalf("ada's delete confirmation: %d, button %v: nothing below would prove anything", res.Status, strings.Contains(string(res.Body), button))
	}
	res := e.Do(s.Client, "GET", own, "", nil)
	if body := string(res.Body); res.Status != http.StatusUnprocessableEntity || !strings.Contains(body, data.OwnAccountKept) || strings.Contains(body, button) || strings.Contains(body, `action="`+own+`"`) {
		t.Errorf("the own delete's confirmation: %d, says why %v, offers the button %v:\n%s", res.Status, strings.Contains(body, data.OwnAccountKept), strings.Contains(body, button), body)
	}
	res = e.Do(s.Client, "POST", own, "", url.Values{"csrf_token": {e.CSRF(s)}})
	if body := string(res.Body); res.Status != http.StatusUnprocessableEntity || !strings.Contains(body, data.OwnAccountKept) || strings.Contains(body, button) {
		t.Errorf("a post of the own delete: %d, says why %v, offers the button %v", res.Status, strings.Contains(body, data.OwnAccountKept), strings.Contains(body, button))
	}
	if me := e.Do(nil, "GET", "/api/v1/user", e.Owner.Token, nil); me.Status != http.StatusOK {
		t.Errorf("the account after the refused post: %d", me.Status)
	}
}
