package console_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

var nextInput = regexp.MustCompile(`name="next" value="([^"]*)"`)
var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// TestSignInGoesOnlyToThisSite: after signing in, the page goes to next only when it is a
// path on this site as a browser reads it; anything else goes to /. Both ways in are
// checked: the sign-in page's hidden field (from ?next=) and the posted form.
func TestSignInGoesOnlyToThisSite(t *testing.T) {
	e := testenv.Start(t)
	cases := []struct{ next, want string }{
		{"/agents", "/agents"},
		{"/calls?status=ended&agent_id=agt_1", "/calls?status=ended&agent_id=agt_1"},
		{"/agents/../calls", "/calls"}, // cleaned, still this site
		{"/%2F%2Fevil.example", "/%2F%2Fevil.example"},
		{"/\t/evil.example", "/"}, // the issue's /%09/evil.example: browsers drop the tab
		{"/\n/evil.example", "/"},
		{"/\r/evil.example", "/"},
		{"//evil.example", "/"},
		{"/\\evil.example", "/"}, // browsers read \ as /
		{"\\/evil.example", "/"},
		{"https://evil.example/", "/"},
		{"javascript:alert(1)", "/"},
		{" /agents", "/"},
		{"/a b", "/"},
		{"/\u00a0/evil.example", "/"},
		{"evil.example", "/"},
		{"", "/"},
	}
	for _, c := range cases {
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		page := string(e.Do(client, "GET", "/login?next="+url.QueryEscape(c.next), "", nil).Body)
		field := nextInput.FindStringSubmatch(page)
		csrf := csrfField.FindStringSubmatch(page)
		if field == nil || csrf == nil {
			t.Fatalf("the sign-in page has no next or csrf_token field:\n%s", page)
		}
		if kept := field[1] != ""; kept != (c.want != "/" || c.next == "/") {
			t.Errorf("next=%q: the sign-in page keeps %q", c.next, field[1])
		}
		res := e.Do(client, "POST", "/login", "", url.Values{"csrf_token": {csrf[1]}, "email": {e.Owner.Email}, "password": {e.Owner.Password}, "next": {c.next}})
		if res.Status != http.StatusSeeOther || res.Header.Get("Location") != c.want {
			t.Errorf("next=%q: %d Location %q, want 303 to %q", c.next, res.Status, res.Header.Get("Location"), c.want)
		}
	}
}
