package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console"
	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestPricesOfferedWhereAccepted: the price table's link (the workspace page's, and an
// agent's analysis page's when no call has a cost) is offered to whom the API lets read
// it (data.NeedWorkspaceAdmin): the owner, and not a console used with the owner's key
// scoped to agents and analytics, which GET /api/v1/price-table answers 403 (the key
// lacks workspace:admin). The analysis page's link followed the role alone before. (Such
// a key cannot open the workspace page at all.)
func TestPricesOfferedWhereAccepted(t *testing.T) {
	e := testenv.Start(t)
	agent := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Priced"})
	if agent.Status != http.StatusCreated {
		t.Fatalf("agent: %d %s", agent.Status, agent.Body)
	}
	analysis := "/agents/" + agent.Data()["id"].(string) + "/analysis"
	k := e.Do(nil, "POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "analyst", "scopes": []string{"agents:read", "analytics:read"}})
	if k.Status != http.StatusCreated {
		t.Fatalf("key: %d %s", k.Status, k.Body)
	}
	key := k.JSON()["token"].(string)
	if r := e.Do(nil, "GET", "/api/v1/price-table", key, nil); r.Status != http.StatusForbidden {
		t.Fatalf("the key's GET /api/v1/price-table: %d, want 403", r.Status)
	}
	const link = `href="/workspace/prices"`
	owner := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	for _, path := range []string{"/workspace", analysis} {
		if body := string(e.Do(owner.Client, "GET", path, "", nil).Body); !strings.Contains(body, link) {
			t.Errorf("the owner's %s does not offer the price table", path)
		}
	}
	res := e.Do(nil, "GET", analysis, "", nil, "Cookie", console.SessionCookie+"="+key)
	if res.Status != http.StatusOK {
		t.Fatalf("the key's %s: %d", analysis, res.Status)
	}
	if body := string(res.Body); !strings.Contains(body, "price table") || strings.Contains(body, link) {
		t.Errorf("the key's analysis page: names the price table %v, links it %v (the API refuses the key)",
			strings.Contains(body, "price table"), strings.Contains(body, link))
	}
}
