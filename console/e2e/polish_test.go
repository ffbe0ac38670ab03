package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Issue 30, point 8 (polish), one test per point.

// An HTML 404 page for unknown console URLs, signed in or not; the API keeps its JSON one.
func TestNotFoundPage(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	for _, path := range []string{"/no-such-page", "/agents/x/y/z"} {
		res, err := http.Get(e.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), "Page not found") {
			t.Errorf("GET %s signed out: %d %s, want the HTML 404 page", path, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}
	if res := e.Do(nil, "GET", "/api/v1/no-such-thing", "", nil); res.Status != http.StatusNotFound || res.JSON()["code"] != "not_found" {
		t.Errorf("an unknown API path: %d %s, want the JSON 404", res.Status, res.Body)
	}

	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/no-such-page")
	if h := b.text("h1"); h != "Page not found" {
		t.Errorf("the 404 page in the browser: %q", h)
	}
}

// A favicon, by the page's link and at /favicon.ico.
func TestFavicon(t *testing.T) {
	b := signedIn(t)
	e := b.env
	var icon string
	b.eval("favicon", `(() => { const l = document.querySelector('link[rel="icon"]'); return l ? fetch(l.href).then(r => r.status + " " + r.headers.get("content-type")) : "no icon link"; })()`, &icon)
	if icon != "200 image/svg+xml" {
		t.Errorf("the favicon: %q", icon)
	}
	if res, err := http.Get(e.URL + "/favicon.ico"); err != nil || res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("/favicon.ico: %v %v", res, err)
	}

}

// One style for every input, whatever its type: the calls page, with an input of each
// type beside its own.
func TestOneInputStyle(t *testing.T) {
	b := signedIn(t)
	b.open("/calls")
	var styles []string
	b.eval("input styles", `(() => {
		const form = document.querySelector("form.filters");
		for (const type of ["text", "search", "tel", "url", "email", "password", "number", "date"]) {
			const i = document.createElement("input"); i.type = type; i.dataset.probe = type; form.appendChild(i);
		}
		return Array.from(form.querySelectorAll("input[data-probe], select")).map(el => {
			const s = getComputedStyle(el);
			return [s.height, s.borderTopWidth, s.borderTopColor, s.borderTopLeftRadius, s.paddingLeft, s.fontSize, s.fontWeight, s.backgroundColor].join(" ");
		});
	})()`, &styles)
	for _, s := range styles {
		if s != styles[0] {
			t.Errorf("inputs differ in style: %q", styles)
			break
		}
	}

}

// Webhook events grouped by resource, with a select-all per group.
func TestWebhookEventGroups(t *testing.T) {
	b := signedIn(t)
	b.open("/webhooks")
	b.clickText("Add a webhook")
	b.run("all call events", chromedp.Click(`//fieldset[legend[normalize-space(.)="Calls"]]//input[@data-all]`, chromedp.BySearch))
	var calls []bool
	b.eval("call events", `Array.from(document.querySelectorAll('input[name="events"][value^="call."]')).map(c => c.checked)`, &calls)
	if len(calls) == 0 {
		t.Error("no call events offered")
	}
	for _, c := range calls {
		if !c {
			t.Errorf("after the Calls group's select-all the call events are %v", calls)
			break
		}
	}

}

// Tables usable at a phone's and a tablet's width: a table of seven columns does not scroll sideways.
func TestTablesAtPhoneWidth(t *testing.T) {
	b := signedIn(t)
	agent := b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Narrow"})["id"].(string)
	b.mustAPI(http.StatusCreated, "POST", "/api/v1/calls", map[string]any{"agent_id": agent, "direction": "inbound", "status": "ended",
		"from_number": "+14155550999", "to_number": "+14155550123", "duration_ms": 61_000})
	b.open("/calls")
	for _, w := range auditWidths {
		b.run(fmt.Sprintf("%d px", w), chromedp.EmulateViewport(int64(w), 800))
		var sideways int
		b.eval("table scroll", `(() => { const w = document.querySelector(".table-wrap"); return w.scrollWidth - w.clientWidth; })()`, &sideways)
		if sideways > 1 {
			t.Errorf("at %d px the calls table scrolls sideways by %d px", w, sideways)
		}
	}
}
