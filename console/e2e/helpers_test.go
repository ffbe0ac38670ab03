package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// Helpers of the issue 30 tests. They find what a person would (a link or button by its
// words), so that the same test runs against the console before and after a change.

// clickText clicks the first link, button or summary whose words start with text.
func (b *browser) clickText(text string) {
	b.t.Helper()
	b.run("click "+text, chromedp.Click(fmt.Sprintf(`//*[self::a or self::button or self::summary][starts-with(normalize-space(.), %q)]`, text), chromedp.BySearch))
}

// follow runs actions that lead to another page (a click on a link, a form sent) and
// waits until that page has loaded: the page before is marked, and the marked page's
// still being there means the next one has not come yet.
func (b *browser) follow(what string, actions ...chromedp.Action) {
	b.t.Helper()
	b.run(what, append([]chromedp.Action{chromedp.Evaluate(`window.voiceapiBefore = true`, nil)}, actions...)...)
	const arrived = `window.voiceapiBefore === undefined && document.readyState === "complete" && !!document.querySelector("#main")`
	for {
		var ok bool
		// While the browser navigates, an evaluation may fail: it is asked again.
		if err := chromedp.Run(b.ctx, chromedp.Evaluate(arrived, &ok)); err == nil && ok {
			return
		}
		select {
		case <-b.ctx.Done():
			b.t.Fatalf("%s: the next page did not come: %v", what, b.ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// followText clicks the first link or button whose words start with text, and waits
// for the page it leads to.
func (b *browser) followText(text string) {
	b.t.Helper()
	b.follow("follow "+text, chromedp.Click(fmt.Sprintf(`//*[self::a or self::button][starts-with(normalize-space(.), %q)]`, text), chromedp.BySearch))
}

// submit sends the form that holds the element sel, as its submit button would, and
// waits for the page that answers.
func (b *browser) submit(sel string) {
	b.t.Helper()
	b.follow("submit the form of "+sel, chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).form.requestSubmit(), true`, sel), nil))
}

// waitText waits until the page's main landmark shows text.
func (b *browser) waitText(text string) {
	b.t.Helper()
	b.run("wait for "+text, chromedp.WaitVisible(fmt.Sprintf(`//main[contains(., %q)]`, text), chromedp.BySearch))
}

// api calls the REST API as the owner.
func (b *browser) api(method, path string, body any) *testenv.Response {
	b.t.Helper()
	return b.env.Do(nil, method, path, b.env.Owner.Token, body)
}

// mustAPI is api that fails the test unless the status is want.
func (b *browser) mustAPI(want int, method, path string, body any) map[string]any {
	b.t.Helper()
	res := b.api(method, path, body)
	if res.Status != want {
		b.t.Fatalf("%s %s: %d %s", method, path, res.Status, res.Body)
	}
	return res.Data()
}

// listCount counts the records of a list whose field is value (one page of 100).
func (b *browser) listCount(path, field, value string) int {
	b.t.Helper()
	res := b.api("GET", path+"?per_page=100", nil)
	if res.Status != http.StatusOK {
		b.t.Fatalf("GET %s: %d %s", path, res.Status, res.Body)
	}
	n := 0
	for _, it := range res.JSON()["data"].([]any) {
		if m, _ := it.(map[string]any); str(m[field]) == value {
			n++
		}
	}
	return n
}

// signedIn opens a browser signed in as the owner.
func signedIn(t *testing.T) *browser {
	b := newBrowser(t)
	b.signIn(b.env.Owner.Email, b.env.Owner.Password, "")
	return b
}

// inTimeZone makes the browser run in zone (an IANA name), as a user there would.
func (b *browser) inTimeZone(zone string) {
	b.t.Helper()
	b.run("time zone "+zone, chromedp.ActionFunc(func(ctx context.Context) error {
		return emulation.SetTimezoneOverride(zone).Do(ctx)
	}))
}
