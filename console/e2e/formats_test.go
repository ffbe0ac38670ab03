package e2e

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Issue 30, point 6: times in the browser's time zone, recent ones relative; durations in
// minutes and seconds; labels instead of the API's snake_case; and validation messages in
// the words of the form's labels.
func TestHumanFormats(t *testing.T) {
	b := signedIn(t)
	b.inTimeZone("America/New_York")
	agent := b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Clock"})["id"].(string)
	b.mustAPI(http.StatusCreated, "POST", "/api/v1/calls", map[string]any{"agent_id": agent, "direction": "web", "status": "ended",
		"duration_ms": 210_000, "disconnection_reason": "user_hangup"})

	b.open("/agents")
	iso := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d`)
	if s := b.text("table tbody"); iso.MatchString(s) || !strings.Contains(s, "now") && !strings.Contains(s, "ago") {
		t.Errorf("the agents list's times: %q, want a relative time, not RFC 3339", s)
	}
	var title string
	b.eval("local time", `(document.querySelector("tbody time") || {}).title || ""`, &title)
	if !strings.Contains(title, "EST") && !strings.Contains(title, "EDT") && !strings.Contains(title, "Eastern") {
		t.Errorf("a time's full form %q is not in the browser's time zone (New York)", title)
	}

	b.open("/calls")
	if s := b.text("table tbody"); !strings.Contains(s, "3 min 30 s") || iso.MatchString(s) {
		t.Errorf("the calls list: %q, want the duration as 3 min 30 s", s)
	}
	if s := b.text("table tbody"); strings.Contains(s, "ended") || !strings.Contains(s, "Ended") || !strings.Contains(s, "Web") {
		t.Errorf("the calls list: %q, want labels (Ended, Web), not enums", s)
	}
	b.open("/workspace")
	if s := b.text("main"); strings.Contains(s, "call_minutes_per_month") || strings.Contains(s, "knowledge_base") {
		t.Errorf("the workspace page shows snake_case names: %q", s)
	}

	b.open("/numbers")
	b.clickText("Add a number")
	b.run("a bad number", chromedp.WaitVisible("#n-phone", chromedp.ByQuery), chromedp.SendKeys("#n-phone", "555-0100", chromedp.ByQuery))
	b.submit("#n-phone")
	if s := b.text("main"); strings.Contains(s, "phone_number") || !strings.Contains(s, "Phone number") {
		t.Errorf("the refusal of a bad phone number: %q, want the form's label, not phone_number", s)
	}
}

// A refused form far down a page (adding a member, at the end of the workspace page)
// shows its refusal beside the form, in view, in the form's words.
func TestRefusalBesideTheForm(t *testing.T) {
	b := signedIn(t)
	b.open("/workspace")
	b.clickText("Add a member")
	b.run("unknown email", chromedp.WaitVisible("#new-member", chromedp.ByQuery), chromedp.SendKeys("#new-member", "nobody@example.com", chromedp.ByQuery))
	b.submit("#new-member")
	b.waitInView("Email must be the email of an existing user")
}
