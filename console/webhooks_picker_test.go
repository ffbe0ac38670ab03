package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console"
	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestWebhookFormOffersWhatTheAPIAccepts: the event picker follows GET
// /webhooks/event-types. An owner is offered "*" and job.failed. A console used with a
// key limited to the agents module (the session cookie holds any token) is offered
// neither as a box it can tick: job.failed comes disabled under "Not offered to you",
// and on a webhook that already carries it, ticked and sent back as it is, so nothing
// drops it unseen; such a webhook's save, replay, rotation and delete are not offered to
// the key at all (the API refuses them, 403), the page saying why. Its deliveries, which
// name events the key may not read, are not shown, and the API's reason is.
func TestWebhookFormOffersWhatTheAPIAccepts(t *testing.T) {
	e := testenv.Start(t)
	owner := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	page := string(e.Do(owner.Client, "GET", "/webhooks", "", nil).Body)
	if !strings.Contains(page, `name="events" value="*"`) || !strings.Contains(page, `name="events" value="job.failed"`) || strings.Contains(page, "data-withheld") {
		t.Fatalf("the owner's picker: offers * %v, job.failed %v, withholds %v", strings.Contains(page, `value="*"`),
			strings.Contains(page, `name="events" value="job.failed"`), strings.Contains(page, "data-withheld"))
	}
	wh := e.Do(nil, "POST", "/api/v1/webhooks", e.Owner.Token, map[string]any{"url": "https://example.com/hook", "events": []string{"agent.created", "job.failed"}})
	if wh.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", wh.Status, wh.Body)
	}
	id := wh.Data()["id"].(string)

	k := e.Do(nil, "POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "agents and webhooks", "scopes": []string{"agents:read", "webhooks:read", "webhooks:write"}})
	if k.Status != http.StatusCreated {
		t.Fatalf("key: %d %s", k.Status, k.Body)
	}
	cookie := console.SessionCookie + "=" + k.JSON()["token"].(string)
	for _, path := range []string{"/webhooks", "/webhooks/" + id} {
		res := e.Do(nil, "GET", path, "", nil, "Cookie", cookie)
		body := string(res.Body)
		if res.Status != http.StatusOK {
			t.Fatalf("%s with the limited key: %d", path, res.Status)
		}
		if strings.Contains(body, `name="events" value="*"`) || strings.Contains(body, `type="checkbox" name="events" value="job.failed"`) {
			t.Errorf("%s offers what the key may not subscribe to", path)
		}
		if !strings.Contains(body, `name="events" value="agent.created"`) || !strings.Contains(body, `value="job.failed" disabled`) {
			t.Errorf("%s: agent.created offered %v, job.failed shown withheld %v", path,
				strings.Contains(body, `name="events" value="agent.created"`), strings.Contains(body, `value="job.failed" disabled`))
		}
	}
	show := string(e.Do(nil, "GET", "/webhooks/"+id, "", nil, "Cookie", cookie).Body)
	if !strings.Contains(show, `value="job.failed" disabled checked`) || !strings.Contains(show, `<input type="hidden" name="events" value="job.failed">`) {
		t.Errorf("the webhook's withheld job.failed is not shown ticked and sent back")
	}
	// The delivery log names job.failed and webhook.test events, which the key may not
	// read: the page shows the API's reason instead, and offers no test event (a
	// webhook.test event the key may not read either). The owner has both.
	test := `action="/webhooks/` + id + `/test"`
	if !strings.Contains(show, "data-withheld-deliveries") || !strings.Contains(show, "lacks") || strings.Contains(show, test) {
		t.Errorf("the limited key's page: deliveries withheld %v, test offered %v", strings.Contains(show, "data-withheld-deliveries"), strings.Contains(show, test))
	}
	if !strings.Contains(show, "data-uncarried") || strings.Contains(show, `href="/webhooks/`+id+`/delete"`) {
		t.Errorf("the limited key's page: says what it may not carry %v, offers the delete %v", strings.Contains(show, "data-uncarried"),
			strings.Contains(show, `href="/webhooks/`+id+`/delete"`))
	}
	mine := string(e.Do(owner.Client, "GET", "/webhooks/"+id, "", nil).Body)
	if strings.Contains(mine, "data-withheld-deliveries") || !strings.Contains(mine, test) ||
		strings.Contains(mine, "data-uncarried") || !strings.Contains(mine, `href="/webhooks/`+id+`/delete"`) {
		t.Errorf("the owner's page: deliveries withheld %v, test offered %v, delete offered %v", strings.Contains(mine, "data-withheld-deliveries"),
			strings.Contains(mine, test), strings.Contains(mine, `href="/webhooks/`+id+`/delete"`))
	}
}
