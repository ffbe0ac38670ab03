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
// faulty. A key reading every module sees it.
func TestAuditPageVerifiesForEveryEventReaderOnly(t *testing.T) {
	e := testenv.Start(t)
	page := func(scopes []string) string {
		t.Helper()
		key := e.Do(nil, "POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "auditor", "scopes": scopes})
		if key.Status != http.StatusCreated {
			t.Fatalf("key: %d %s", key.Status, key.Body)
		}
		jar, _ := cookiejar.New(nil)
		base, _ := url.Parse(e.URL)
		jar.SetCookies(base, []*http.Cookie{{Name: console.SessionCookie, Value: key.JSON()["token"].(string)}})
		r := e.Do(&http.Client{Jar: jar}, "GET", "/workspace/audit", "", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("the audit page as %v: %d %s", scopes, r.Status, r.Body)
		}
		return string(r.Body)
	}
	if body := page([]string{data.ScopeAuditRead, "agents:read"}); strings.Contains(body, "Hash chain") {
		t.Errorf("a key reading the agents module alone is shown the chain's verification:\n%s", body)
	}
	every := []string{data.ScopeAuditRead}
	for _, m := range data.Modules {
		every = append(every, data.ReadScope(m))
	}
	if body := page(every); !strings.Contains(body, "every link intact") {
		t.Errorf("a key reading every module is not shown the chain's verification:\n%s", body)
	}
}
