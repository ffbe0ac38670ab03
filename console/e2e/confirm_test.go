package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/data"
)

// Issue 30, point 2: each destructive action asks first, naming what it acts on and what
// is lost; until confirmed nothing has happened, and confirmed it happens.
func TestDestructiveActionsAsk(t *testing.T) {
	b := signedIn(t)
	kb := b.mustAPI(http.StatusCreated, "POST", "/api/v1/knowledge-bases", map[string]any{"name": "Returns policy",
		"texts": []map[string]string{{"title": "Refunds", "content": "Refunds take five days."}}})
	kbID := kb["id"].(string)
	wh := b.api("POST", "/api/v1/webhooks", map[string]any{"url": "https://hooks.example.com/a", "events": []string{"*"}})
	whID, firstSecret := wh.Data()["id"].(string), wh.JSON()["secret"].(string)
	key := b.api("POST", "/api/v1/api-keys", map[string]any{"name": "ci runner"}).JSON()["token"].(string)
	num := b.mustAPI(http.StatusCreated, "POST", "/api/v1/numbers", map[string]any{"phone_number": "+14155550142", "provider": "twilio"})["id"].(string)

	for _, c := range []struct {
		name, page, action, names string
		still, gone               func() bool
	}{
		{"delete a knowledge base", "/knowledge-bases/" + kbID, "Delete this knowledge base", "Returns policy",
			func() bool { return b.api("GET", "/api/v1/knowledge-bases/"+kbID, nil).Status == http.StatusOK },
			func() bool { return b.api("GET", "/api/v1/knowledge-bases/"+kbID, nil).Status == http.StatusNotFound }},
		{"rotate a webhook's secret", "/webhooks/" + whID, "Rotate the secret", "https://hooks.example.com/a",
			func() bool { return b.rotations() == 0 },
			func() bool {
				return b.rotations() == 1 && b.count(".secret input") == 1 && !strings.Contains(b.text(".secret"), firstSecret)
			}},
		{"delete a webhook", "/webhooks/" + whID, "Delete this webhook", "https://hooks.example.com/a",
			func() bool { return b.api("GET", "/api/v1/webhooks/"+whID, nil).Status == http.StatusOK },
			func() bool { return b.api("GET", "/api/v1/webhooks/"+whID, nil).Status == http.StatusNotFound }},
		{"revoke an API key", "/api-keys", "Revoke", "ci runner",
			func() bool { return b.env.Do(nil, "GET", "/api/v1/user", key, nil).Status == http.StatusOK },
			func() bool { return b.env.Do(nil, "GET", "/api/v1/user", key, nil).Status == http.StatusUnauthorized }},
		{"delete a number", "/numbers/" + num, "Delete this number", "+14155550142",
			func() bool { return b.api("GET", "/api/v1/numbers/"+num, nil).Status == http.StatusOK },
			func() bool { return b.api("GET", "/api/v1/numbers/"+num, nil).Status == http.StatusNotFound }},
	} {
		b.open(c.page)
		if c.action == "Revoke" {
			b.follow(c.name, chromedp.Click(`[aria-label="Revoke ci runner"]`, chromedp.ByQuery))
		} else {
			b.followText(c.action)
		}
		if !c.still() {
			t.Errorf("%s: done on one click, before any confirmation", c.name)
			continue
		}
		page := b.text("main")
		if !strings.Contains(page, c.names) || !strings.Contains(page, "What is lost") {
			t.Errorf("%s: the confirmation does not name %q and what is lost:\n%s", c.name, c.names, page)
		}
		b.follow(c.name+": confirm", chromedp.Click(`.confirm button.danger`, chromedp.ByQuery))
		if !c.gone() {
			t.Errorf("%s: not done after the confirmation", c.name)
		}
	}
}

// rotations counts the webhook secret rotations in the audit log.
func (b *browser) rotations() int {
	b.t.Helper()
	res := b.api("GET", "/api/v1/audit-log?type="+data.EventWebhookSecretRotated, nil)
	return len(res.JSON()["data"].([]any))
}
