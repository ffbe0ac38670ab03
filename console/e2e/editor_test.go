package e2e

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Issue 30, point 3: the agent editor shows 3,600,000 ms as 3600000 (an hour), says
// draft once a save made the published agent a draft, and tells what a save did beside
// the Save button, in view wherever the page is scrolled.
func TestEditorNumbersStatusAndMessages(t *testing.T) {
	b := signedIn(t)
	id := b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Hotline",
		"call_config": map[string]any{"max_call_duration_ms": 3_600_000}})["id"].(string)
	b.mustAPI(http.StatusNoContent, "POST", "/api/v1/agents/"+id+"/publish", map[string]any{})
	b.open("/agents/" + id)
	var v string
	b.run("duration", chromedp.Value(`input[data-key="max_call_duration_ms"]`, &v, chromedp.ByQuery))
	if v != "3600000" {
		t.Errorf("max call duration shows %q, want 3600000", v)
	}
	if hint := b.fieldText(`input[data-key="max_call_duration_ms"]`); !strings.Contains(hint, "1 h") {
		t.Errorf("the max call duration's label does not read it as an hour: %q", hint)
	}

	// A save from the bottom of the page: the message is in view, and the badge says draft.
	b.run("edit", chromedp.SetValue(`textarea[data-key="prompt"]`, "Answer in one sentence.", chromedp.ByQuery),
		chromedp.ScrollIntoView(`#agent-form button[type="submit"]`, chromedp.ByQuery),
		chromedp.Click(`#agent-form button[type="submit"]`, chromedp.ByQuery))
	b.waitInView("Saved.")
	if s := strings.ToLower(b.text("h1 .badge")); s != "draft" {
		t.Errorf("after a save of a published agent the badge says %q, want draft", s)
	}

	// A save that does not reach the server says so, and that nothing was saved, in
	// words (it showed the browser's "Failed to fetch").
	br := b.breakRequests()
	br.set("/api/v1/agents/"+id, "offline")
	b.run("save offline", chromedp.Click(`#agent-form button[type="submit"]`, chromedp.ByQuery))
	b.waitInView("Not saved: the save did not reach the server.")
	if s := b.text("#save-errors"); s != "The save did not reach the server: nothing was saved. Check the connection and save again." {
		t.Errorf("a save offline says %q", s)
	}
	br.set("/api/v1/agents/"+id, "")

	// A refused save, also from the bottom: what went wrong is in view, and the field in
	// error has the focus.
	b.run("break the name", chromedp.Evaluate(`document.querySelector('input[data-key="name"]').value = " "`, nil),
		chromedp.ScrollIntoView(`#agent-form button[type="submit"]`, chromedp.ByQuery),
		chromedp.Click(`#agent-form button[type="submit"]`, chromedp.ByQuery))
	b.waitInView("Not saved")
	var focused string
	b.eval("focus", `document.activeElement.dataset.key || ""`, &focused)
	if focused != "name" {
		t.Errorf("after a refused save the focus is on %q, want the name field", focused)
	}
}

// Issue 30, point 3: switching the voice provider does not carry the previous
// provider's voice id into the new provider's field, and what is saved is what was typed.
func TestEditorVoiceProviderSwitchStartsEmpty(t *testing.T) {
	b := signedIn(t)
	id := b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Voices",
		"tts_config": map[string]any{"provider": "elevenlabs", "model": "eleven_flash_v2_5", "voice_id": "eleven-voice-1"}})["id"].(string)
	b.open("/agents/" + id)
	b.setSelect(`select[data-key="provider"][data-switch="tts"]`, "cartesia")
	var v string
	b.run("voice id", chromedp.Value(`[data-case="tts"]:not([hidden]) input[data-key="voice_id"]`, &v, chromedp.ByQuery))
	if v != "" {
		t.Fatalf("after switching to cartesia the voice id field holds %q, elevenlabs's", v)
	}
	b.run("cartesia voice", chromedp.SendKeys(`[data-case="tts"]:not([hidden]) input[data-key="voice_id"]`, "cartesia-voice-7", chromedp.ByQuery),
		chromedp.Click(`#agent-form button[type="submit"]`, chromedp.ByQuery))
	b.waitInView("Saved.")
	tts := b.mustAPI(http.StatusOK, "GET", "/api/v1/agents/"+id, nil)["tts_config"].(map[string]any)
	if tts["provider"] != "cartesia" || tts["voice_id"] != "cartesia-voice-7" {
		t.Errorf("stored tts_config: %v", tts)
	}
}

// Issue 30, point 3: knowledge bases are picked by name, not typed as ids.
func TestEditorKnowledgeBasePicker(t *testing.T) {
	b := signedIn(t)
	b.mustAPI(http.StatusCreated, "POST", "/api/v1/knowledge-bases", map[string]any{"name": "Returns"})
	shipping := b.mustAPI(http.StatusCreated, "POST", "/api/v1/knowledge-bases", map[string]any{"name": "Shipping"})["id"].(string)
	id := b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Picker"})["id"].(string)
	b.open("/agents/" + id)
	b.run("pick Shipping", chromedp.Click(`//label[normalize-space(.)="Shipping"]/input[@type="checkbox"]`, chromedp.BySearch),
		chromedp.Click(`#agent-form button[type="submit"]`, chromedp.ByQuery))
	b.waitInView("Saved.")
	ids := b.mustAPI(http.StatusOK, "GET", "/api/v1/agents/"+id, nil)["llm_config"].(map[string]any)["knowledge_base_ids"]
	if !reflect.DeepEqual(ids, []any{shipping}) {
		t.Errorf("knowledge_base_ids = %v, want [%s]", ids, shipping)
	}
}

// fieldText is the text of the label around the field sel.
func (b *browser) fieldText(sel string) string {
	b.t.Helper()
	var s string
	b.eval("label of "+sel, `(document.querySelector(`+quoteJS(sel)+`).closest("label") || {}).textContent || ""`, &s)
	return s
}

// waitInView waits for a status message holding text (a role="status" element or the
// save bar) and fails unless it is inside the viewport when it shows.
func (b *browser) waitInView(text string) {
	b.t.Helper()
	b.run("message "+text, chromedp.WaitVisible(`//*[@role="status" or @role="alert" or @id="save-status"][contains(., `+xpathString(text)+`)]`, chromedp.BySearch))
	var in bool
	b.eval("in view", `Array.from(document.querySelectorAll('[role="status"], [role="alert"], #save-status')).some(e => {
		if (!e.textContent.includes(`+quoteJS(text)+`) || e.hidden) return false;
		const r = e.getBoundingClientRect();
		return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight;
	})`, &in)
	if !in {
		b.t.Errorf("the message %q is out of view", text)
	}
}

// xpathString writes s as an XPath string literal.
func xpathString(s string) string {
	if !strings.Contains(s, `"`) {
		return `"` + s + `"`
	}
	return `'` + s + `'`
}
