package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

// TestTestsTab: sign in, open an agent's Tests tab, write a required test with two
// criteria and a mock (and see a bad pattern refused beside its field), and a failing
// one; the publish button is held back; run all, watch the run end, read each verdict
// highlighted with the turn it rests on; run one selected test alone; then the gate opens
// and the draft publishes.
func TestTestsTab(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	id := createTrattoria(t, b)

	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/agents/" + id)
	b.run("open the Tests tab", chromedp.Click(`a[href="/agents/`+id+`/tests"]`, chromedp.ByQuery), chromedp.WaitVisible(`[data-gate]`, chromedp.ByQuery))
	var gate string
	b.eval("gate", `document.querySelector("[data-gate]").dataset.gate`, &gate)
	if gate != data.GateOpen {
		t.Errorf("the gate of an agent without tests = %q", gate)
	}

	b.writeRequiredTest(t, id)
	b.writeFailingTest(t, id)
	b.runAllTests(t)
	b.runSelected(t, id, "offers dessert")

	// The required test passed on this draft: the gate opens and the draft publishes.
	b.open("/agents/" + id + "/tests")
	b.eval("gate", `document.querySelector("[data-gate]").dataset.gate`, &gate)
	if gate != data.GateOpen {
		t.Fatalf("after a passing run the gate = %q", gate)
	}
	b.run("publish", chromedp.SendKeys("#pub-desc", "tested", chromedp.ByQuery), chromedp.Click(`[data-publish]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//td[text()="tested"]`, chromedp.BySearch))

	// Publishing changed the agent record, not what the tests ran on: the same draft is
	// still tested and publishes again without another run.
	b.open("/agents/" + id + "/tests")
	b.eval("gate", `document.querySelector("[data-gate]").dataset.gate`, &gate)
	if gate != data.GateOpen {
		t.Fatalf("after the publish the same draft's gate = %q", gate)
	}
	b.run("publish again", chromedp.SendKeys("#pub-desc", "again", chromedp.ByQuery), chromedp.Click(`[data-publish]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//td[text()="again"]`, chromedp.BySearch))

	b.deleteFailingTest(t, id)
}

// createTrattoria creates, through the API, an agent on a scripted model that books a
// table with its custom function, and returns its id.
func createTrattoria(t *testing.T, b *browser) string {
	t.Helper()
	e := b.env
	stand := llmtest.New(t, data.LLMInternal)
	f := &llmtest.Fixture{
		Agent:        []llmtest.Rule{{When: "table", Reply: llmtest.Calls(llm.ToolCall{Name: "book", Arguments: `{"people":2}`})}},
		AgentDefault: llmtest.Text("Welcome to Trattoria!"),
		AfterTools:   llmtest.Text("You're booked for two."),
	}
	stand.Respond(f.Respond)
	raw, _ := json.Marshal(stand.LLMConfig())
	var cfg map[string]any
	json.Unmarshal(raw, &cfg)
	cfg["tools"] = []any{map[string]any{"name": "book", "type": "custom_function", "api_endpoint": "https://example.com/book",
		"custom_function_parameters": `{"type":"object","properties":{"people":{"type":"integer"}}}`}}
	a := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Trattoria", "llm_config": cfg,
		"prompt_config": map[string]any{"first_speaker": "user"}})
	if a.Status != 201 {
		t.Fatalf("agent: %d %s", a.Status, a.Body)
	}
	return a.Data()["id"].(string)
}

// writeRequiredTest writes a required test: a script, a mock of the function, says and
// tool_called; a bad pattern is refused beside its field first.
func (b *browser) writeRequiredTest(t *testing.T, id string) {
	t.Helper()
	b.run("write a test", chromedp.Click(`a[href="/agents/`+id+`/tests/new"]`, chromedp.ByQuery), chromedp.WaitVisible(`#test-form`, chromedp.ByQuery),
		chromedp.SendKeys(`input[name="name"]`, "books a table", chromedp.ByQuery),
		chromedp.Click(`input[name="required"]`, chromedp.ByQuery),
		chromedp.SendKeys(`textarea[name="script"]`, "A table for two, please", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="c_pattern"]`, "(booked", chromedp.ByQuery))
	var patternShown bool
	b.eval("the pattern field shows for says", `!document.querySelector('input[name="c_pattern"]').closest("[data-for]").hidden &&
		document.querySelector('input[name="c_name"]').closest("[data-for]").hidden`, &patternShown)
	if !patternShown {
		t.Error("a says criterion does not show its pattern alone")
	}
	b.run("add a tool_called criterion and a mock", chromedp.Click(`[data-add-row="criteria"]`, chromedp.ByQuery))
	b.setSelect(`[data-rows="criteria"] li:last-child select[name="c_type"]`, data.CriterionToolCalled)
	b.run("fill them", chromedp.SendKeys(`[data-rows="criteria"] li:last-child input[name="c_name"]`, "book", chromedp.ByQuery),
		chromedp.Click(`[data-add-row="mocks"]`, chromedp.ByQuery),
		chromedp.SendKeys(`input[name="mock_tool"]`, "book", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="mock_status"]`, "200", chromedp.ByQuery),
		chromedp.SendKeys(`textarea[name="mock_body"]`, `{"ok":true}`, chromedp.ByQuery))
	b.audit("test-editor")
	b.run("save with a bad pattern", chromedp.Click(`#test-form button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(`.alert`, chromedp.ByQuery))
	if s := b.text(`[data-rows="criteria"] li:first-child [data-for="says not_says"] .err`); !strings.Contains(s, "is not a valid regular expression: a ( has no closing )") || strings.Contains(s, "parsing") {
		t.Fatalf("the bad pattern's fault beside its field = %q", s)
	}
	b.audit("test-editor-refused") // the fault describes its field
	b.run("fix it and save", chromedp.SetValue(`[data-rows="criteria"] li:first-child input[name="c_pattern"]`, "booked", chromedp.ByQuery),
		chromedp.Click(`#test-form button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(`p.notice`, chromedp.ByQuery))
}

// writeFailingTest writes a failing test, not required, and checks the publish button
// is held back while the required test has never run.
func (b *browser) writeFailingTest(t *testing.T, id string) {
	t.Helper()
	b.open("/agents/" + id + "/tests/new")
	b.run("write a failing test", chromedp.SendKeys(`input[name="name"]`, "offers dessert", chromedp.ByQuery),
		chromedp.SendKeys(`textarea[name="script"]`, "Hello", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="c_pattern"]`, "dessert", chromedp.ByQuery),
		chromedp.Click(`#test-form button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(`p.notice`, chromedp.ByQuery))
	var gate string
	b.eval("gate", `document.querySelector("[data-gate]").dataset.gate`, &gate)
	var disabled bool
	b.eval("publish held back", `document.querySelector("[data-publish]").disabled`, &disabled)
	if gate != data.GateTestsRequired || !disabled {
		t.Errorf("with a required test never run: gate %q, publish disabled %v", gate, disabled)
	}
	// In words, not the API's codes (not_run, tests_required).
	if s := b.text(`.gate-tests .badge`); s != "Not run" {
		t.Errorf("the gate's test status = %q, want Not run", s)
	}
	if s := b.text(`[data-publish]`); s != "Publish the draft (Tests required)" {
		t.Errorf("the held-back publish button = %q", s)
	}
	b.audit("tests")
}

// runEnded finds a run's status once it has ended.
const runEnded = `//span[@data-run-status="passed" or @data-run-status="failed" or @data-run-status="error"]`

// runAllTests runs all the tests, the page following the run to its end, and reads each
// verdict highlighted with the turn it rests on.
func (b *browser) runAllTests(t *testing.T) {
	t.Helper()
	b.run("run all", chromedp.Click(`[data-run-all]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#run-progress`, chromedp.ByQuery),
		// The progress polls, and once the run ends the page reloads with its results.
		chromedp.WaitVisible(runEnded, chromedp.BySearch),
		chromedp.WaitVisible(`li.verdict`, chromedp.ByQuery))
	var status string
	b.eval("the run's status", `document.querySelector("[data-run-status]").dataset.runStatus`, &status)
	if s := b.text(`[data-run-status]`); status != data.TestFailed || s != "Failed" {
		t.Errorf("the run's status = %q, shown as %q; want failed (dessert), in words", status, s)
	}
	// A title naming the agent and when the run was asked for, and results in words.
	if h := b.text("h1"); !strings.Contains(h, "Tests of Trattoria, run ") || strings.Contains(h, data.PrefixTestRun) {
		t.Errorf("the run's title = %q", h)
	}
	var codes []string
	b.eval("the results' codes", `Array.from(document.querySelectorAll("[data-test-result] .badge, [data-test-result] summary"), e => e.textContent)
		.filter(s => /\b(passed|failed|error|user_ended|agent_ended|max_turns)\b/.test(s))`, &codes)
	if len(codes) > 0 {
		t.Errorf("results shown as the API's codes: %q", codes)
	}
	var counts struct{ Results, Pass, Fail, PassTurns, FailTurns int }
	var found string
	b.eval("verdicts", `JSON.stringify({Results: document.querySelectorAll("[data-test-result]").length,
		Pass: document.querySelectorAll("li.verdict.pass").length, Fail: document.querySelectorAll("li.verdict.fail").length,
		PassTurns: document.querySelectorAll("li.turn.evidence-pass").length, FailTurns: document.querySelectorAll("li.turn.evidence-fail").length})`, &found)
	json.Unmarshal([]byte(found), &counts)
	if counts.Results != 2 || counts.Pass != 2 || counts.Fail != 1 || counts.PassTurns != 2 {
		t.Errorf("results %+v: want 2 results, 2 verdicts passed (each with its turn highlighted), 1 failed", counts)
	}
	if s := b.text(`li.verdict.fail`); !strings.Contains(s, "dessert") {
		t.Errorf("the failed verdict = %q", s)
	}
	if s := b.text(`li.turn.evidence-pass`); !strings.Contains(s, "book") && !strings.Contains(s, "booked") {
		t.Errorf("a highlighted turn = %q", s)
	}
	b.audit("test-run")
}

// deleteFailingTest deletes the failing test: the console asks first (its confirmation
// step), then returns to the tab.
func (b *browser) deleteFailingTest(t *testing.T, id string) {
	t.Helper()
	b.open("/agents/" + id + "/tests")
	b.run("open the failing test", chromedp.Click(`//a[text()="offers dessert"]`, chromedp.BySearch), chromedp.WaitVisible(`#test-form`, chromedp.ByQuery))
	b.run("ask to delete it", chromedp.Click(`a[href$="/delete"]`, chromedp.ByQuery), chromedp.WaitVisible(`.confirm`, chromedp.ByQuery))
	if s := b.text(`.confirm`); !strings.Contains(s, "Earlier runs") {
		t.Errorf("the confirmation says what stays: %q", s)
	}
	b.audit("test-delete")
	b.run("delete it", chromedp.Click(`.confirm button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(`#tests-list p.notice`, chromedp.ByQuery))
	var left string
	b.eval("the tests left", `document.querySelector("#tests-list").textContent`, &left)
	if strings.Contains(left, "offers dessert") || !strings.Contains(left, "Test deleted.") {
		t.Errorf("after the deletion the tests list reads %q", left)
	}
}

// runSelected runs one test from the agent's Tests tab, selected by name, and checks that
// its run holds that test's result alone.
func (b *browser) runSelected(t *testing.T, agentID, name string) {
	t.Helper()
	b.open("/agents/" + agentID + "/tests")
	b.run("run the selected test", chromedp.Click(`input[aria-label="Select `+name+`"]`, chromedp.ByQuery),
		chromedp.Click(`[data-run-selected]`, chromedp.ByQuery),
		chromedp.WaitVisible(runEnded, chromedp.BySearch),
		chromedp.WaitVisible(`li.verdict`, chromedp.ByQuery))
	var names string
	b.eval("the run's tests", `Array.from(document.querySelectorAll("[data-test-result]"), e => e.textContent).join("|")`, &names)
	if n := strings.Count(names, "|") + 1; n != 1 || !strings.Contains(names, name) {
		t.Errorf("the run of the selected test holds %d result(s): %q", n, names)
	}
	if h := b.text("h1"); !strings.Contains(h, "Test “"+name+"” of Trattoria, run ") {
		t.Errorf("the title of a run of one test = %q", h)
	}
}
