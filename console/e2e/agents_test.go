package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestAgentJourney: sign in, create an agent, submit an invalid tool and see each error
// beside its field, fix it, publish twice, diff the versions, restore the first, sign out.
func TestAgentJourney(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/agents")
	b.audit("agents")

	b.createJourneyAgent()
	b.checkInvalidToolErrors()
	id := b.fixJourneyTool()
	b.publishTwiceAndDiff(id)
	b.restoreFirstVersion(id)
	b.switchVoiceToRime(id)
	b.checkCredentialMaskedAndKept(id)
	b.checkStaleSaveOffersReload(id)

	// Sign out: back to the sign-in page, and the session's token no longer works.
	b.run("sign out", chromedp.Click(`form.signout button`, chromedp.ByQuery), chromedp.WaitVisible("#email", chromedp.ByQuery))
	b.audit("login")
	b.open("/agents")
	b.run("signed out", chromedp.WaitVisible("#email", chromedp.ByQuery))
}

// createJourneyAgent creates the journey's agent and checks its editor shows the
// provider's own fields only: groq shows no azure deployment.
func (b *browser) createJourneyAgent() {
	b.t.Helper()
	b.run("create agent",
		chromedp.SendKeys("#new-agent-name", "Support line", chromedp.ByQuery),
		chromedp.Click(`form.inline-create button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#agent-form", chromedp.ByQuery),
	)
	if h1 := b.text("h1"); !strings.Contains(h1, "Support line") {
		b.t.Fatalf("editor heading %q", h1)
	}
	var shown bool
	b.eval("azure hidden", `!!document.querySelector('[data-case="llm"][data-is="azure"]').offsetParent`, &shown)
	if shown {
		b.t.Errorf("azure's fields are shown while the provider is groq")
	}
}

// checkInvalidToolErrors saves an invalid tool (a name with a space, and a transfer
// without a phone directory) and checks each error is shown beside its field.
func (b *browser) checkInvalidToolErrors() {
	b.t.Helper()
	b.run("add tool", chromedp.Click(`[data-list="tools"] > button[data-action="add"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-list="tools"] li.tool input[data-key="name"]`, chromedp.ByQuery))
	b.run("tool name", chromedp.SendKeys(`li.tool input[data-key="name"]`, "front desk", chromedp.ByQuery))
	b.setSelect(`li.tool select[data-key="type"]`, "transfer_call")
	b.run("save", chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#save-errors`, chromedp.ByQuery))
	// Beside the field, in the words of its label rather than the API's path.
	nameErr := b.text(`li.tool .field:has(> label > input[data-key="name"]) [data-err]`)
	if !strings.HasPrefix(nameErr, "Name ") || strings.Contains(nameErr, "llm_config") {
		b.t.Errorf("the name's error beside it: %q", nameErr)
	}
	// The list's message in the form's words too, the condition's field and value among
	// them (it read "The llm_config.tools.0.phone_directory field is required when
	// llm_config.tools.0.type is transfer_call.").
	dirErr := b.text(`li.tool [data-list="phone_directory"] > [data-err]`)
	if dirErr != "Phone directory is required when “Type” is “Transfer call”." {
		b.t.Errorf("the phone directory's error beside it: %q", dirErr)
	}
	var invalid string
	b.eval("aria-invalid", `document.querySelector('li.tool input[data-key="name"]').getAttribute("aria-invalid")`, &invalid)
	if invalid != "true" {
		b.t.Errorf("the invalid name is not marked aria-invalid")
	}
	b.run("show the tool", chromedp.ScrollIntoView("li.tool", chromedp.ByQuery))
	b.audit("agent-errors")
}

// fixJourneyTool fixes the tool (a valid name and one directory entry), saves it, checks
// the API stores it, and returns the agent's id.
func (b *browser) fixJourneyTool() string {
	b.t.Helper()
	b.run("fix name", chromedp.SetValue(`li.tool input[data-key="name"]`, "front_desk", chromedp.ByQuery),
		chromedp.Click(`[data-list="phone_directory"] > button[data-action="add"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-list="phone_directory"] li input[data-key="phone_number"]`, chromedp.ByQuery),
		chromedp.SendKeys(`[data-list="phone_directory"] li input[data-key="name"]`, "Desk", chromedp.ByQuery),
		chromedp.SendKeys(`[data-list="phone_directory"] li input[data-key="phone_number"]`, "+14155550100", chromedp.ByQuery),
		chromedp.SendKeys(`[data-list="phone_directory"] li input[data-key="description"]`, "The front desk", chromedp.ByQuery),
		chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery),
	)
	b.run("saved", chromedp.WaitVisible(`//*[@id="save-status"][text()="Saved."]`, chromedp.BySearch))
	id := b.agentID()
	got := b.env.Do(nil, "GET", "/api/v1/agents/"+id, b.env.Owner.Token, nil).Data()
	tools := got["llm_config"].(map[string]any)["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["name"] != "front_desk" {
		b.t.Fatalf("stored tools: %v", tools)
	}
	return id
}

// publishTwiceAndDiff publishes version 1, changes the prompt, publishes version 2, and
// checks the diff of 1 with 2 shows the prompt changed.
func (b *browser) publishTwiceAndDiff(id string) {
	b.t.Helper()
	b.publish(id, "first")
	b.open("/agents/" + id)
	b.run("edit prompt", chromedp.SetValue(`textarea[data-key="prompt"]`, "You answer for the front desk.", chromedp.ByQuery),
		chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery),
		chromedp.WaitVisible(`//*[@id="save-status"][text()="Saved."]`, chromedp.BySearch))
	b.publish(id, "second")
	b.audit("versions")

	b.setSelect("#diff-a", "1")
	b.setSelect("#diff-b", "2")
	b.run("diff", chromedp.Click(`form.filters button`, chromedp.ByQuery), chromedp.WaitVisible("table.diff", chromedp.ByQuery))
	if row := b.text("table.diff tbody"); !strings.Contains(row, "prompt_config.prompt") || !strings.Contains(row, "You answer for the front desk.") {
		b.t.Errorf("diff rows: %q", row)
	}
	b.audit("diff")
}

// restoreFirstVersion restores version 1, confirmed, and checks the draft lost version
// 2's prompt.
func (b *browser) restoreFirstVersion(id string) {
	b.t.Helper()
	b.open("/agents/" + id + "/versions")
	b.run("restore", chromedp.Click(`a[href$="/versions/1/restore"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.confirm button.danger`, chromedp.ByQuery))
	b.audit("restore")
	b.run("confirm", chromedp.Click(`.confirm button.danger`, chromedp.ByQuery), chromedp.WaitVisible(".notice", chromedp.ByQuery))
	if n := b.text(".notice"); n != "Restored version 1." {
		b.t.Errorf("notice %q", n)
	}
	a := b.env.Do(nil, "GET", "/api/v1/agents/"+id, b.env.Owner.Token, nil).Data()
	if strings.Contains(a["prompt_config"].(map[string]any)["prompt"].(string), "front desk") {
		b.t.Errorf("the draft still has version 2's prompt after restoring version 1")
	}
}

// switchVoiceToRime checks that switching the voice provider shows rime's fields only,
// and that the save clears what the old provider's fields held (voice_id is not rime's).
func (b *browser) switchVoiceToRime(id string) {
	b.t.Helper()
	b.open("/agents/" + id)
	b.setSelect(`select[data-key="provider"][data-switch="tts"]`, "rime")
	var shown bool
	b.eval("elevenlabs hidden", `!!document.querySelector('[data-case="tts"][data-is="elevenlabs cartesia"]').offsetParent`, &shown)
	if shown {
		b.t.Errorf("voice_id is still offered for rime")
	}
	b.setSelect(`[data-case="tts"][data-is="rime"] select[data-key="model"]`, "arcana")
	// streaming_latency is elevenlabs's and rime's: a switch starts it empty too.
	b.run("rime", chromedp.SendKeys(`[data-case="tts"][data-is="rime"] input[data-key="speaker"]`, "luna", chromedp.ByQuery),
		chromedp.SendKeys(`[data-case="tts"][data-is="elevenlabs rime"] input[data-key="streaming_latency"]`, "1", chromedp.ByQuery),
		chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery),
		chromedp.WaitVisible(`//*[@id="save-status"][text()="Saved."]`, chromedp.BySearch))
	tts := b.env.Do(nil, "GET", "/api/v1/agents/"+id, b.env.Owner.Token, nil).Data()["tts_config"].(map[string]any)
	if tts["provider"] != "rime" || tts["model"] != "arcana" || tts["speaker"] != "luna" || tts["voice_id"] != nil {
		b.t.Errorf("tts_config after switching to rime: %v", tts)
	}
}

// checkCredentialMaskedAndKept checks that a credential is shown masked and kept when
// a save does not touch it.
func (b *browser) checkCredentialMaskedAndKept(id string) {
	b.t.Helper()
	e := b.env
	const secret = "sk-live-0123456789abcdef"
	if r := e.Do(nil, "PUT", "/api/v1/agents/"+id, e.Owner.Token, map[string]any{"llm_config": map[string]any{"api_key": secret}}); r.Status != http.StatusOK {
		b.t.Fatalf("set api_key: %d %s", r.Status, r.Body)
	}
	b.open("/agents/" + id)
	var masked string
	b.run("masked", chromedp.Value(`input[data-key="api_key"]`, &masked, chromedp.ByQuery))
	if masked == "" || strings.Contains(masked, "0123456789") {
		b.t.Errorf("the api_key field holds %q, want the masked value", masked)
	}
	b.run("save untouched", chromedp.SetValue(`textarea[data-key="prompt"]`, "Short answers.", chromedp.ByQuery),
		chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery),
		chromedp.WaitVisible(`//*[@id="save-status"][text()="Saved."]`, chromedp.BySearch))
	kept := e.Do(nil, "GET", "/api/v1/agents/"+id, e.Owner.Token, nil).Data()["llm_config"].(map[string]any)["api_key"]
	if kept != masked {
		b.t.Errorf("after a save that did not touch it the api_key is %v, want it kept (%q)", kept, masked)
	}

	// A custom function's credential header: masked in the page (the tool's data the
	// editor sends back included), kept by a save that does not touch it.
	tools := []any{map[string]any{"name": "crm", "type": "custom_function", "http_method": "POST",
		"api_endpoint": "https://crm.example.com/orders", "custom_function_headers": []string{"Authorization: Bearer sk_live_header0123abcd"}}}
	if r := e.Do(nil, "PUT", "/api/v1/agents/"+id, e.Owner.Token, map[string]any{"llm_config": map[string]any{"tools": tools}}); r.Status != http.StatusOK {
		b.t.Fatalf("set a credential header: %d %s", r.Status, r.Body)
	}
	b.open("/agents/" + id)
	var page string
	b.eval("page", `document.documentElement.outerHTML`, &page)
	if strings.Contains(page, "sk_live_header") {
		b.t.Error("the editor's page holds the credential header's value")
	}
	b.run("save untouched header", chromedp.SetValue(`textarea[data-key="prompt"]`, "Shorter answers.", chromedp.ByQuery),
		chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery),
		chromedp.WaitVisible(`//*[@id="save-status"][text()="Saved."]`, chromedp.BySearch))
	got := e.Do(nil, "GET", "/api/v1/agents/"+id, e.Owner.Token, nil).Data()
	headers := got["llm_config"].(map[string]any)["tools"].([]any)[0].(map[string]any)["custom_function_headers"].([]any)
	if got["prompt_config"].(map[string]any)["prompt"] != "Shorter answers." || len(headers) != 1 || headers[0] != "Authorization: ****abcd" {
		b.t.Errorf("after a save that did not touch it the header is %v, want it kept masked", headers)
	}
}

// checkStaleSaveOffersReload checks a 412: someone else saves meanwhile; the editor says
// so and offers to reload.
func (b *browser) checkStaleSaveOffersReload(id string) {
	b.t.Helper()
	e := b.env
	b.open("/agents/" + id)
	if r := e.Do(nil, "PUT", "/api/v1/agents/"+id, e.Owner.Token, map[string]any{"name": "Renamed elsewhere"}); r.Status != http.StatusOK {
		b.t.Fatalf("concurrent save: %d %s", r.Status, r.Body)
	}
	b.run("stale save", chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#save-errors button`, chromedp.ByQuery))
	if msg := b.text("#save-errors"); !strings.Contains(msg, "Someone else saved") {
		b.t.Errorf("412 message %q", msg)
	}
	b.run("reload", chromedp.Click(`#save-errors button`, chromedp.ByQuery),
		chromedp.WaitVisible(`//h1[contains(., "Renamed elsewhere")]`, chromedp.BySearch))
}

// agentID reads the editor's agent id.
func (b *browser) agentID() string {
	b.t.Helper()
	var id string
	b.eval("agent id", `document.getElementById("agent-form").dataset.agentId`, &id)
	return id
}

// publish publishes the draft from the versions page.
func (b *browser) publish(id, description string) {
	b.t.Helper()
	b.open("/agents/" + id + "/versions")
	b.run("publish", chromedp.SendKeys("#pub-desc", description, chromedp.ByQuery),
		chromedp.Click(`form.inline-create button`, chromedp.ByQuery),
		chromedp.WaitVisible(`//td[text()="`+description+`"]`, chromedp.BySearch))
}

// Changing a tool's type in the editor drops what the old type held: a tool is sent
// whole, so its stored phone directory must not outlive a change to end_call.
func TestToolTypeChangeDropsTheOldTypesFields(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	tool := map[string]any{"name": "desk", "type": "transfer_call", "phone_directory": []any{
		map[string]any{"name": "Desk", "phone_number": "+14155550100", "description": "The desk", "transfer_type": "cold"}}}
	res := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Switch", "llm_config": map[string]any{"tools": []any{tool}}})
	if res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	id := res.Data()["id"].(string)
	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/agents/" + id)
	b.run("editor", chromedp.WaitVisible(`li.tool select[data-key="type"]`, chromedp.ByQuery))
	b.setSelect(`li.tool select[data-key="type"]`, "end_call")
	b.run("save", chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery),
		chromedp.WaitVisible(`//*[@id="save-status"][text()="Saved."]`, chromedp.BySearch))
	got := e.Do(nil, "GET", "/api/v1/agents/"+id, e.Owner.Token, nil).Data()
	stored := got["llm_config"].(map[string]any)["tools"].([]any)[0].(map[string]any)
	if stored["type"] != "end_call" || len(stored["phone_directory"].([]any)) != 0 {
		t.Fatalf("the tool after a change to end_call: %v", stored)
	}
}
