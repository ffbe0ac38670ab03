package console_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console"
	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/data"
)

// The audit page shows the chain's verification only to a session that may read every
// event (data.NeedAuditChain, the API's rule): a key with audit:read that reads some
// modules sees its share of the log, not how many events the workspace has nor which are
// faulty. A key reading every module sees it, on demand: the page alone offers to verify
// (verifying recomputes the whole history), verify=1 verifies, and the filters' and
// pages' links do not carry verify=1.
func TestAuditPageVerifiesForEveryEventReaderOnly(t *testing.T) {
	e := testenv.Start(t)
	page := func(scopes []string, query string) string {
		t.Helper()
		key := e.Do(nil, "POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "auditor", "scopes": scopes})
		if key.Status != http.StatusCreated {
			t.Fatalf("key: %d %s", key.Status, key.Body)
		}
		jar, _ := cookiejar.New(nil)
		base, _ := url.Parse(e.URL)
		jar.SetCookies(base, []*http.Cookie{{Name: console.SessionCookie, Value: key.JSON()["token"].(string)}})
		r := e.Do(&http.Client{Jar: jar}, "GET", "/workspace/audit"+query, "", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("the audit page as %v: %d %s", scopes, r.Status, r.Body)
		}
		return string(r.Body)
	}
	for _, q := range []string{"", "?verify=1"} {
		if body := page([]string{data.ScopeAuditRead, "agents:read"}, q); strings.Contains(body, "Hash chain") {
			t.Errorf("a key reading the agents module alone is shown the chain's verification (%q):\n%s", q, body)
		}
	}
	every := []string{data.ScopeAuditRead}
	for _, m := range data.Modules {
		every = append(every, data.ReadScope(m))
	}
	verifies := func() int { return apiRequests(t, e)["GET /api/v1/audit-log/verify"] }
	before := verifies()
	body := page(every, "?type=agent.created")
	if n := verifies() - before; n != 0 {
		t.Errorf("the audit page asked the API to verify the chain %d times unasked", n)
	}
	if strings.Contains(body, "every link intact") || !strings.Contains(body, `href="?type=agent.created&amp;verify=1">Verify the chain</a>`) {
		t.Errorf("the audit page verifies the chain unasked, or does not offer to:\n%s", body)
	}
	before = verifies()
	body = page(every, "?type=agent.created&verify=1")
	if n := verifies() - before; n != 1 {
		t.Errorf("the audit page with verify=1 asked the API to verify the chain %d times, not once", n)
	}
	if !strings.Contains(body, "every link intact") {
		t.Errorf("a key reading every module is not shown the chain's verification when it asks:\n%s", body)
	}
	if strings.Contains(body, "verify=1") {
		t.Errorf("a link of the verified page carries verify=1:\n%s", body)
	}
}
