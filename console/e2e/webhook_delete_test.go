package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/console"
)

// TestWebhookDeleteOfferedWhereAccepted: a console session holding a key with
// webhooks:write and agents:read (the session cookie holds any token) is offered the
// delete (and settings, replay, rotation) of a webhook of agent events, and deletes it
// through the confirmation; on the owner's webhook of security events, which the API
// refuses it (the key lacks audit:read), it is offered none of them and told why, and
// the webhook stays. Before, the delete was offered on both and the API deleted both.
func TestWebhookDeleteOfferedWhereAccepted(t *testing.T) {
	b := newBrowser(t)
	security := b.mustAPI(201, "POST", "/api/v1/webhooks", map[string]any{"url": "https://example.com/security", "events": []string{"api_key.created"}})["id"].(string)
	agents := b.mustAPI(201, "POST", "/api/v1/webhooks", map[string]any{"url": "https://example.com/agents", "events": []string{"agent.created"}})["id"].(string)
	key := b.api("POST", "/api/v1/api-keys", map[string]any{"name": "webhook writer", "scopes": []string{"agents:read", "webhooks:read", "webhooks:write"}})
	if key.Status != 201 {
		t.Fatalf("key: %d %s", key.Status, key.Body)
	}
	b.run("session of the key", chromedp.ActionFunc(func(ctx context.Context) error {
		return network.SetCookie(console.SessionCookie, key.JSON()["token"].(string)).WithURL(b.env.URL).WithHTTPOnly(true).Do(ctx)
	}))

	deleteLink := func() int {
		var n int
		b.eval("delete offered", `document.querySelectorAll('a[href$="/delete"]').length`, &n)
		return n
	}
	b.open("/webhooks/" + security)
	if n := deleteLink(); n != 0 {
		t.Errorf("the security webhook's page offers the key %d delete links", n)
	}
	note := b.text("[data-uncarried]")
	if !strings.Contains(note, "api_key.created") || !strings.Contains(note, "deletes it") {
		t.Errorf("the security webhook's page says %q", note)
	}
	var offered int
	b.eval("other offers", `document.querySelectorAll('form[action$="/replay"], a[href$="/rotate"], #wh-settings button[type="submit"]').length`, &offered)
	if offered != 0 {
		t.Errorf("the security webhook's page offers the key %d of its replay, rotation and save", offered)
	}
	b.audit("webhook-uncarried")
	// Nor by its address: the confirmations refuse the key as the API would.
	for _, action := range []string{"delete", "rotate"} {
		b.open("/webhooks/" + security + "/" + action)
		if h := b.text("h1"); h != "Not allowed" {
			t.Errorf("the security webhook's %s confirmation, opened by its address, is titled %q", action, h)
		}
		if n := b.count(`form[action$="/` + action + `"] button`); n != 0 {
			t.Errorf("the security webhook's %s confirmation offers the key %d buttons", action, n)
		}
	}

	b.open("/webhooks/" + agents)
	if n := deleteLink(); n != 1 {
		t.Fatalf("the agents webhook's page offers the key %d delete links, want 1", n)
	}
	b.followText("Delete this webhook")
	b.followText("Delete webhook")
	b.waitText("Webhook deleted.")

	if r := b.api("GET", "/api/v1/webhooks/"+agents, nil); r.Status != 404 {
		t.Errorf("the agents webhook after its delete: %d", r.Status)
	}
	if r := b.api("GET", "/api/v1/webhooks/"+security, nil); r.Status != 200 {
		t.Errorf("the security webhook: %d, want kept", r.Status)
	}
}
