package e2e

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/console"
)

// The console's offers that followed the role alone now follow the rule of the API's
// route they lead to (data.NeedWebhooks, NeedWorkspaceAdmin, NeedAuditLog,
// NeedMemberChange), which reads a key's scopes too. Each test holds a console session
// with the owner's key limited to scopes (the session cookie holds any token): the key
// the API refuses is not offered the action; the one it accepts is.

// asKey makes the browser's console session the owner's key with scopes, after checking
// what the API answers it at method path (refused: 403, else 2xx).
func (b *browser) asKey(scopes []string, method, path string, body any, refused bool) {
	b.t.Helper()
	k := b.api("POST", "/api/v1/api-keys", map[string]any{"name": "scoped", "scopes": scopes})
	if k.Status != 201 {
		b.t.Fatalf("key: %d %s", k.Status, k.Body)
	}
	token := k.JSON()["token"].(string)
	res := b.env.Do(nil, method, path, token, body)
	if got := res.Status == 403; got != refused || !refused && res.Status/100 != 2 {
		b.t.Fatalf("the key scoped %v: %s %s answered %d %s", scopes, method, path, res.Status, res.Body)
	}
	b.run("session of the key", chromedp.ActionFunc(func(ctx context.Context) error {
		return network.SetCookie(console.SessionCookie, token).WithURL(b.env.URL).WithHTTPOnly(true).Do(ctx)
	}))
}

// TestWebhooksNavOfferedWhereAccepted: the nav's Webhooks link is offered to a key
// holding webhooks:read, not to one scoped to agents alone, which GET /api/v1/webhooks
// answers 403. Before, every admin's key saw it.
func TestWebhooksNavOfferedWhereAccepted(t *testing.T) {
	for _, c := range []struct {
		scopes  []string
		refused bool
	}{{[]string{"agents:read"}, true}, {[]string{"agents:read", "webhooks:read"}, false}} {
		b := newBrowser(t)
		b.asKey(c.scopes, "GET", "/api/v1/webhooks", nil, c.refused)
		b.open("/agents")
		if n := b.count(`nav a[href="/webhooks"]`); (n == 0) != c.refused {
			t.Errorf("the key scoped %v is offered %d Webhooks links in the nav", c.scopes, n)
		}
	}
}

// TestPrivacySaveOfferedWhereAccepted: the privacy page's save (PUT of the workspace)
// is offered to a key holding workspace:admin, and its fields are read-only for one
// scoped to agents alone, which the API answers 403. Before, an admin's key of any
// scopes was offered the save.
func TestPrivacySaveOfferedWhereAccepted(t *testing.T) {
	for _, c := range []struct {
		scopes  []string
		refused bool
	}{{[]string{"agents:read"}, true}, {[]string{"workspace:admin"}, false}} {
		b := newBrowser(t)
		b.asKey(c.scopes, "PUT", "/api/v1/workspaces/"+b.env.Owner.WorkspaceID, map[string]any{"description": "kept"}, c.refused)
		b.open("/workspace/privacy")
		if n := b.count(`#main button[type="submit"]`); (n == 0) != c.refused {
			t.Errorf("the key scoped %v is offered %d save buttons on the privacy page", c.scopes, n)
		}
		if n := b.count(`#pv-calls[readonly]`); (n == 1) != c.refused {
			t.Errorf("the key scoped %v: the retention field read-only %d", c.scopes, n)
		}
	}
}

// TestAuditLinkOfferedWhereAccepted: the workspace page links the audit log for a key
// holding audit:read, not for one holding workspace:admin alone (which opens the page),
// which GET /api/v1/audit-log answers 403. Before, the role alone decided.
func TestAuditLinkOfferedWhereAccepted(t *testing.T) {
	for _, c := range []struct {
		scopes  []string
		refused bool
	}{{[]string{"workspace:admin"}, true}, {[]string{"workspace:admin", "audit:read"}, false}} {
		b := newBrowser(t)
		b.asKey(c.scopes, "GET", "/api/v1/audit-log", nil, c.refused)
		b.open("/workspace")
		if n := b.count(`#main a[href="/workspace/audit"]`); (n == 0) != c.refused {
			t.Errorf("the key scoped %v is offered %d audit log links", c.scopes, n)
		}
	}
}

// TestMemberChangesOfferedWhereAccepted: the workspace page offers adding, changing and
// removing members to the owner's session, not to the owner's key holding
// workspace:admin (which opens the page), which the members' routes answer 403 (they
// need a key without scopes). Before, the role alone decided.
func TestMemberChangesOfferedWhereAccepted(t *testing.T) {
	b := newBrowser(t)
	b.signIn(b.env.Owner.Email, b.env.Owner.Password, b.env.Owner.WorkspaceID)
	b.open("/workspace")
	if n := b.count(`#add-member`) + b.count(`form[action^="/workspace/members/"]`); n < 2 {
		t.Fatalf("the owner's session is offered %d of adding and changing members, want both", n)
	}
	b.asKey([]string{"workspace:admin"}, "PUT", "/api/v1/workspaces/"+b.env.Owner.WorkspaceID+"/users/"+b.env.Owner.ID,
		map[string]any{"role": "owner"}, true)
	b.open("/workspace")
	if n := b.count(`#add-member`) + b.count(`form[action^="/workspace/members/"]`) + b.count(`a[href$="/remove"]`); n != 0 {
		t.Errorf("the key scoped to workspace:admin is offered %d of adding, changing and removing members", n)
	}
}

// TestNumberChangesOfferedWhereAccepted: a console session of the owner's key limited to
// agent A is offered a number's save and delete where the API accepts its update, and on
// a number bound to no agent but dialed from by agent B's open campaign, which the API
// refuses (403), is offered neither and told why. Before, the page judged from the
// number's bindings alone and offered both there.
func TestNumberChangesOfferedWhereAccepted(t *testing.T) {
	b := newBrowser(t)
	agent := func(name string) string {
		r := b.api("POST", "/api/v1/agents", map[string]any{"name": name})
		if r.Status != 201 {
			t.Fatalf("agent: %d %s", r.Status, r.Body)
		}
		id := r.Data()["id"].(string)
		if r := b.api("POST", "/api/v1/agents/"+id+"/publish", nil); r.Status != 204 {
			t.Fatalf("publish: %d %s", r.Status, r.Body)
		}
		return id
	}
	a, other := agent("Alpha line"), agent("Bravo line")
	number := func(phone string) string {
		r := b.api("POST", "/api/v1/numbers", map[string]any{"phone_number": phone, "provider": "twilio"})
		if r.Status != 201 {
			t.Fatalf("number: %d %s", r.Status, r.Body)
		}
		return r.Data()["id"].(string)
	}
	free, dialed := number("+14155550101"), number("+14155550102")
	window := map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, "start": "00:00", "end": "23:59"}
	if r := b.api("POST", "/api/v1/campaigns", map[string]any{"name": "Bravo's", "agent_id": other, "number_id": dialed, "window": window,
		"max_concurrent": 1, "start_at": "2099-01-01T00:00:00Z", "recipients": []any{map[string]any{"phone_number": "+14155550200"}}}); r.Status != 201 {
		t.Fatalf("campaign: %d %s", r.Status, r.Body)
	}
	k := b.api("POST", "/api/v1/api-keys", map[string]any{"name": "alpha", "agent_ids": []string{a}})
	if k.Status != 201 {
		t.Fatalf("key: %d %s", k.Status, k.Body)
	}
	token := k.JSON()["token"].(string)
	b.run("session of the key", chromedp.ActionFunc(func(ctx context.Context) error {
		return network.SetCookie(console.SessionCookie, token).WithURL(b.env.URL).WithHTTPOnly(true).Do(ctx)
	}))
	for id, refused := range map[string]bool{free: false, dialed: true} {
		if res := b.env.Do(nil, "PUT", "/api/v1/numbers/"+id, token, map[string]any{}); (res.Status == 403) != refused {
			t.Fatalf("the key's update of %s: %d %s", id, res.Status, res.Body)
		}
		b.open("/numbers/" + id)
		if n := b.count(`#main button[type="submit"].primary`); (n == 0) != refused {
			t.Errorf("number %s: %d save buttons offered, refused %v", id, n, refused)
		}
		if n := b.count(`#main a[href="/numbers/` + id + `/delete"]`); (n == 0) != refused {
			t.Errorf("number %s: %d delete links offered, refused %v", id, n, refused)
		}
		var says bool
		b.eval("why", `document.querySelector("#main").innerText.includes("outside your access")`, &says)
		if says != refused {
			t.Errorf("number %s: the page says an agent outside the key's access acts through it: %v, refused %v", id, says, refused)
		}
	}
}
