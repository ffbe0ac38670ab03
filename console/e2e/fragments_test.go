package e2e

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// breaker fails the browser's requests whose URL ends with one of its suffixes: with an
// HTTP 500, or as if the network had dropped; every other request goes through.
type breaker struct {
	mu    sync.Mutex
	fails map[string]string // URL suffix → "500" or "offline"
}

// breakRequests starts intercepting the tab's requests; set decides which fail.
func (b *browser) breakRequests() *breaker {
	b.t.Helper()
	br := &breaker{fails: map[string]string{}}
	chromedp.ListenTarget(b.ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		go func() {
			exec := cdp.WithExecutor(b.ctx, chromedp.FromContext(b.ctx).Target)
			switch br.failureOf(e.Request.URL) {
			case "500":
				fetch.FulfillRequest(e.RequestID, http.StatusInternalServerError).
					WithResponseHeaders([]*fetch.HeaderEntry{{Name: "Content-Type", Value: "text/html"}}).
					WithBody("PGgxPkludGVybmFsIGVycm9yPC9oMT4=").Do(exec) // "<h1>Internal error</h1>"
			case "offline":
				fetch.FailRequest(e.RequestID, network.ErrorReasonInternetDisconnected).Do(exec)
			default:
				fetch.ContinueRequest(e.RequestID).Do(exec)
			}
		}()
	})
	b.run("intercept", chromedp.ActionFunc(func(ctx context.Context) error { return fetch.Enable().Do(ctx) }))
	return br
}

// set makes requests whose URL (its path, before any query) ends with suffix fail as
// how says ("500", "offline"), or go through again ("").
func (br *breaker) set(suffix, how string) {
	br.mu.Lock()
	defer br.mu.Unlock()
	br.fails[suffix] = how
}

func (br *breaker) failureOf(url string) string {
	br.mu.Lock()
	defer br.mu.Unlock()
	path, _, _ := strings.Cut(url, "?")
	for suffix, how := range br.fails {
		if strings.HasSuffix(path, suffix) {
			return how
		}
	}
	return ""
}

// TestFragmentFailuresSaySo: a part of a page fetched after it (the agent page's Try it
// and rollout panels, a campaign's progress followed every 2 seconds) whose request
// fails says so in words where it would have been: it showed "Loading…" for good, or
// figures that stopped moving without a word. The note goes once a request succeeds.
func TestFragmentFailuresSaySo(t *testing.T) {
	b := signedIn(t)
	agent := b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Front desk"})["id"].(string)
	br := b.breakRequests()
	br.set("/try", "500")
	br.set("/rollout-panel", "offline")
	b.open("/agents/" + agent)
	for _, c := range []struct{ sel, want string }{
		{"#try [role=alert]", "did not load: the server answered with an error (500). Reload the page"},
		{"#rollout [role=alert]", "did not load: the request did not reach the server. Reload the page"},
	} {
		if got := b.text(c.sel); !strings.Contains(got, c.want) {
			t.Errorf("%s reads %q, want %q", c.sel, got, c.want)
		}
	}
	var loading string
	b.eval("still loading", `Array.from(document.querySelectorAll("main *")).filter(e => e.checkVisibility() && e.textContent.trim() === "Loading…").map(e => e.closest("section").id).join(" ")`, &loading)
	if loading != "" {
		t.Errorf("still Loading… after its request failed: %s", loading)
	}
	b.audit("agent-panels-failed")

	if r := b.api("POST", "/api/v1/agents/"+agent+"/publish", nil); r.Status != http.StatusNoContent {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	number := b.mustAPI(http.StatusCreated, "POST", "/api/v1/numbers", map[string]any{"phone_number": "+14155550190", "provider": "sip"})["id"].(string)
	campaign := b.mustAPI(http.StatusCreated, "POST", "/api/v1/campaigns", map[string]any{"name": "Reminders", "agent_id": agent,
		"number_id": number, "recipients": []map[string]any{{"phone_number": "+14155550101"}}, "max_concurrent": 1,
		"window": map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, "start": "00:00", "end": "23:59"}})["id"].(string)
	b.open("/campaigns/" + campaign)
	br.set("/progress", "offline")
	if got := b.text("#progress-failed"); !strings.Contains(got, "Not up to date: the request did not reach the server. Trying again") {
		t.Errorf("the campaign's progress, its network gone: %q", got)
	}
	br.set("/progress", "500")
	b.waitText("Not up to date: the server answered with an error (500)")
	b.audit("campaign-progress-failed")
	br.set("/progress", "")
	b.run("the note goes", chromedp.WaitNotPresent("#progress-failed", chromedp.ByQuery))
}
