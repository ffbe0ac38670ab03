package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestNumberPickerFindsByDigits: with 101 numbers, the calls page's number picker offers
// a search; the oldest number's digits typed with a + and spaces, and Enter, bring it
// back alone, the picker focused, and the page passes the accessibility audit.
func TestNumberPickerFindsByDigits(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	far := b.mustAPI(201, "POST", "/api/v1/numbers", map[string]any{"phone_number": "+14155550000", "provider": "sip", "nickname": "Far line"})["id"].(string)
	for i := range 100 {
		b.mustAPI(201, "POST", "/api/v1/numbers", map[string]any{"phone_number": fmt.Sprintf("+1212555%04d", i), "provider": "sip"})
	}
	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/calls")
	b.follow("find the oldest number", chromedp.SendKeys("#c-number-q", "+1 415 555 0000"+kb.Enter, chromedp.ByQuery))
	var state struct {
		Options []string
		Values  []string
		Focused string
	}
	b.eval("after Find", `({options: Array.from(document.querySelectorAll("#c-number option")).map(o => o.textContent),
		values: Array.from(document.querySelectorAll("#c-number option")).map(o => o.value), focused: document.activeElement.id})`, &state)
	if len(state.Values) != 2 || state.Values[1] != far || !strings.Contains(state.Options[1], "Far line") || state.Focused != "c-number" {
		t.Errorf("after Find: %+v", state)
	}
	b.audit("number-picker-find")
}

// TestRolloutFormMoreVersions: with 101 versions, the rollout form's More versions button
// brings the oldest version's field, the weight typed for the newest kept; the page
// passes the accessibility audit.
func TestRolloutFormMoreVersions(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	id := b.mustAPI(201, "POST", "/api/v1/agents", map[string]any{"name": "Prolific"})["id"].(string)
	for i := range 101 {
		b.mustAPI(200, "PUT", "/api/v1/agents/"+id, map[string]any{"prompt_config": map[string]any{"prompt": fmt.Sprintf("Take %d.", i)}})
		b.mustAPI(204, "POST", "/api/v1/agents/"+id+"/publish", nil)
	}
	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/agents/" + id + "/rollout")
	b.run("a weight for the newest", chromedp.SendKeys("#w-101", "60", chromedp.ByQuery))
	b.follow("more versions", chromedp.Click(`//button[normalize-space(.)="More versions"]`, chromedp.BySearch))
	var state struct {
		Oldest bool
		Newest string
		URL    string
	}
	b.eval("after More", `({oldest: !!document.querySelector("#w-1"), newest: document.querySelector("#w-101")?.value ?? "", url: location.href})`, &state)
	if !state.Oldest || state.Newest != "60" || strings.Contains(state.URL, "csrf_token") {
		t.Errorf("after More versions: %+v", state)
	}
	b.audit("rollout-more-versions")
}
