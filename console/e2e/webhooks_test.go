package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestWebhookDelivery: create a webhook (its secret shown once with a copy button), send a
// test event, see the receiver get it and the delivery log show it.
func TestWebhookDelivery(t *testing.T) {
	recv, got := webhookReceiver(t)
	b := newBrowser(t)
	e := b.env
	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/webhooks")
	b.run("create", chromedp.Click("details.create summary", chromedp.ByQuery),
		chromedp.WaitVisible("#wh-url", chromedp.ByQuery),
		chromedp.SendKeys("#wh-url", recv.URL+"/hook", chromedp.ByQuery),
		chromedp.SendKeys("#wh-desc", "Local receiver", chromedp.ByQuery),
		chromedp.Click(`input[value="agent.created"]`, chromedp.ByQuery),
		chromedp.Click(`details.create button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#secret-0", chromedp.ByQuery))
	var secret string
	b.run("secret", chromedp.Value("#secret-0", &secret, chromedp.ByQuery))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Errorf("secret %q", secret)
	}
	b.audit("webhook")
	// Shown once: the page opened again has no secret.
	var url string
	// The answer to the create is the webhook's page, at the form's URL: read its own.
	b.eval("url", `document.querySelector('form[action$="/test"]').getAttribute("action").replace(/\/test$/, "")`, &url)
	b.open(url)
	var n int
	b.eval("no secret", `document.querySelectorAll("#secret-0").length`, &n)
	if n != 0 {
		t.Errorf("the secret is shown again")
	}

	b.run("test", chromedp.Click(`//button[text()="Send a test event"]`, chromedp.BySearch), chromedp.WaitVisible(".notice", chromedp.ByQuery))
	select {
	case m := <-got:
		if !strings.Contains(m, "webhook.test") || !strings.HasPrefix(m, "v1,") {
			t.Errorf("the receiver got %q", m)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the receiver got nothing")
	}
	// The delivery log shows it; the attempt is recorded just after the post returns.
	for i := 0; ; i++ {
		b.open(url)
		var s string
		b.run("log", chromedp.Text("table tbody", &s, chromedp.ByQuery))
		if strings.Contains(s, "webhook.test") && strings.Contains(s, "Succeeded") && strings.Contains(s, "204") {
			break
		}
		if i == 100 {
			t.Fatalf("delivery log: %q", s)
		}
	}
	b.open("/webhooks")
	b.audit("webhooks")
}

// webhookReceiver is a webhook's receiver: each delivery it gets is sent on the channel
// as its Webhook-Signature header, a space and its body; it answers 204.
func webhookReceiver(t *testing.T) (*httptest.Server, <-chan string) {
	got := make(chan string, 16)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- r.Header.Get("Webhook-Signature") + " " + string(body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)
	return recv, got
}
