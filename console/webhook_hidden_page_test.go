package console_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/console"
	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestWebhookPageOfHiddenDeliveries: a key that may not read the older deliveries of a
// narrowed webhook, more of them than a page once looked at (2,000), sees the log as
// empty: "No deliveries yet", no link to other pages. A page walks the deliveries it
// reads alone; it came back empty with a cursor on, which told the key that deliveries
// it may not read were there.
func TestWebhookPageOfHiddenDeliveries(t *testing.T) {
	e := testenv.Start(t)
	r := e.Do(nil, "POST", "/api/v1/webhooks", e.Owner.Token, map[string]any{"url": "https://example.com/h", "events": []string{"agent.created"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	webhookID := r.Data()["id"].(string)
	ids := data.NewIDGen()
	at := time.Now().Add(-time.Hour)
	if err := e.DB.Update(context.Background(), func(tx service.Tx) error {
		for range 2001 { // of the wider filter it had before
			d := &data.Delivery{ID: ids.New(data.PrefixDelivery), WebhookID: webhookID, EventID: "evt_x", EventType: data.EventCallEnded,
				Attempt: 1, Status: data.DeliverySucceeded, CreatedAt: data.NewTime(at)}
			if err := tx.PutDelivery(d); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	key := e.Do(nil, "POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "agents' webhooks", "scopes": []string{"agents:read", "webhooks:read", "audit:read"}})
	if key.Status != http.StatusCreated {
		t.Fatalf("key: %d %s", key.Status, key.Body)
	}
	jar, _ := cookiejar.New(nil)
	base, _ := url.Parse(e.URL)
	jar.SetCookies(base, []*http.Cookie{{Name: console.SessionCookie, Value: key.JSON()["token"].(string)}})
	page := e.Do(&http.Client{Jar: jar}, "GET", "/webhooks/"+webhookID, "", nil)
	body := string(page.Body)
	if page.Status != http.StatusOK {
		t.Fatalf("the webhook's page: %d %s", page.Status, body)
	}
	if !strings.Contains(body, "No deliveries yet") || strings.Contains(body, "data-empty-page") || strings.Contains(body, "cursor=") {
		t.Errorf("the page of a log of hidden deliveries does not show it empty, with no other page:\n%s", body)
	}
}
