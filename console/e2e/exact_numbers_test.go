package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestAgentPageKeepsNumbers: a default variable a float64 cannot hold as written
// (12345678901234567890, 0.10) shows as written on the agent page, in the variables
// table and in the editor, and a save of another field leaves it as it was: the console
// used to show 12345678901234567000, and its save wrote that back.
func TestAgentPageKeepsNumbers(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	a := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, `{"name": "Ledger", "prompt_config": {"prompt": "Order {{ref}} at {{rate}}.",`+
		`"default_variables": {"ref": 12345678901234567890, "rate": 0.10}}}`)
	if a.Status != 201 {
		t.Fatalf("agent: %d %s", a.Status, a.Body)
	}
	id := a.Data()["id"].(string)
	stored := func(when string) {
		t.Helper()
		body := string(e.Do(nil, "GET", "/api/v1/agents/"+id, e.Owner.Token, nil).Body)
		if !strings.Contains(body, `"ref":12345678901234567890`) || !strings.Contains(body, `"rate":0.10`) {
			t.Errorf("%s: the agent holds %s", when, body)
		}
	}
	stored("created")

	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/agents/" + id)
	b.run("the panel loads", chromedp.WaitVisible(`[data-rollout-panel]`, chromedp.ByQuery))
	vars := b.text(`[data-rollout-panel] table`)
	if !strings.Contains(vars, "default: 12345678901234567890") || !strings.Contains(vars, "default: 0.10") {
		t.Errorf("the variables table: %s", vars)
	}
	var editor string
	b.eval("the editor's variables", `document.querySelector('textarea[data-key="default_variables"]').value`, &editor)
	if !strings.Contains(editor, "12345678901234567890") || !strings.Contains(editor, "0.10") {
		t.Errorf("the editor shows %s", editor)
	}
	b.run("save another field", chromedp.SetValue(`input[data-key="timezone"]`, "Europe/Paris", chromedp.ByQuery),
		chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery),
		chromedp.WaitVisible(`//*[@id="save-status"][text()="Saved."]`, chromedp.BySearch))
	stored("after a save of the editor")
	if body := string(e.Do(nil, "GET", "/api/v1/agents/"+id, e.Owner.Token, nil).Body); !strings.Contains(body, `"timezone":"Europe/Paris"`) {
		t.Errorf("the save did not happen: %s", body)
	}
}
