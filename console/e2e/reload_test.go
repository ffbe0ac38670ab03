package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Issue 30, point 1: a reload after a form created something makes nothing more. The
// webhook's signing secret and the key's token are shown on the page the form led to,
// once: the reloaded page no longer has them.
func TestReloadAfterCreateMakesNothing(t *testing.T) {
	b := signedIn(t)

	b.open("/webhooks")
	b.clickText("Add a webhook")
	b.run("add webhook", chromedp.WaitVisible("#wh-url", chromedp.ByQuery),
		chromedp.SendKeys("#wh-url", "https://hooks.example.com/sink", chromedp.ByQuery),
		chromedp.SendKeys("#wh-desc", "Analytics sink", chromedp.ByQuery),
		chromedp.Click(`input[value="call.ended"]`, chromedp.ByQuery))
	b.submit("#wh-url")
	var secret string
	b.run("secret shown", chromedp.WaitVisible(".secret input", chromedp.ByQuery), chromedp.Value(".secret input", &secret, chromedp.ByQuery))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("the signing secret shown: %q", secret)
	}
	b.reload()
	if n := b.listCount("/api/v1/webhooks", "description", "Analytics sink"); n != 1 {
		t.Errorf("after a reload of the page the webhook form led to, %d webhooks, want 1", n)
	}
	if b.count(".secret") != 0 {
		t.Errorf("the reloaded page shows the signing secret again")
	}

	b.open("/api-keys")
	b.run("key name", chromedp.SendKeys("#key-name", "laptop", chromedp.ByQuery))
	b.submit("#key-name")
	b.run("token shown", chromedp.WaitVisible(".secret input", chromedp.ByQuery))
	b.reload()
	if n := b.listCount("/api/v1/api-keys", "name", "laptop"); n != 1 {
		t.Errorf("after a reload of the page the key form led to, %d keys named laptop, want 1", n)
	}
	if b.count(".secret") != 0 {
		t.Errorf("the reloaded page shows the token again")
	}
}

// reload reloads the page as the browser's reload button does, a form's answer included.
func (b *browser) reload() {
	b.t.Helper()
	b.run("reload", chromedp.Reload(), chromedp.WaitReady("#main", chromedp.ByQuery))
}

// count counts the elements sel matches.
func (b *browser) count(sel string) int {
	b.t.Helper()
	var n int
	b.eval("count "+sel, `document.querySelectorAll(`+quoteJS(sel)+`).length`, &n)
	return n
}

// quoteJS writes s as a JavaScript string literal.
func quoteJS(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
