package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

// TestTryIt: sign in, open an agent, talk to it in its "Try it" panel (its reply streams
// in, with a tool call whose 20-digit argument shows as written in a page without
// JSON.rawJSON, and a retrieved chunk), end the conversation, and find the call in the
// call history.
func TestTryIt(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	stand := startSalesModel(t)
	id := createSalesDesk(t, e, stand)

	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/agents/" + id)
	b.run("the panel loads", chromedp.WaitVisible(`[data-try-start]`, chromedp.ByQuery))
	// The panel shows a tool call's numbers as written without JSON.rawJSON, which not
	// every browser has: it is taken away before anything is read.
	var rawJSON string
	b.eval("no JSON.rawJSON", `delete JSON.rawJSON; typeof JSON.rawJSON`, &rawJSON)
	if rawJSON != "undefined" {
		t.Fatalf("JSON.rawJSON is still a %s", rawJSON)
	}
	b.startTryOnDraft()
	b.sendAndReadTurn()
	b.audit("try-it")
	b.run("back to full width", chromedp.EmulateViewport(1280, 900), chromedp.ScrollIntoView("#try", chromedp.ByQuery))
	b.shot("try-it")
	b.resendAfterCutOff(e, stand)
	b.endTryAndFindCall()
}

// startSalesModel starts a model that notes the plan asked about, then answers from the
// knowledge in its prompt.
func startSalesModel(t *testing.T) *llmtest.Server {
	t.Helper()
	stand := llmtest.New(t, data.LLMInternal)
	stand.Respond(func(r llmtest.Request) llmtest.Reply {
		if len(r.ToolResults()) == 0 && strings.Contains(r.LastUserText(), "pro") {
			return llmtest.Calls(llm.ToolCall{Name: "note_plan", Arguments: `{"plan":"pro","ref":12345678901234567890}`})
		}
		if strings.Contains(r.System, "20 euros") {
			return llmtest.Text("The pro plan costs 20 euros a month.")
		}
		return llmtest.Text("How can I help?")
	})
	return stand
}

// createSalesDesk creates a knowledge base of prices and an agent on stand's model that
// uses it and an extract tool, with {{shop}} in its prompt and welcome, and returns the
// agent's id.
func createSalesDesk(t *testing.T, e *testenv.Env, stand *llmtest.Server) string {
	t.Helper()
	kb := e.Do(nil, "POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": "Prices",
		"texts": []map[string]string{{"title": "Plans", "content": "The pro plan costs 20 euros a month."}}})
	if kb.Status != 201 {
		t.Fatalf("knowledge base: %d %s", kb.Status, kb.Body)
	}
	raw, _ := json.Marshal(stand.LLMConfig())
	var cfg map[string]any
	json.Unmarshal(raw, &cfg)
	cfg["knowledge_base_ids"] = []string{kb.Data()["id"].(string)}
	cfg["tools"] = []any{map[string]any{"name": "note_plan", "type": "extract_dynamic_variable", "variables": []any{
		map[string]any{"type": "enum", "name": "plan", "description": "The plan asked about", "choices": []string{"basic", "pro"}},
		map[string]any{"type": "number", "name": "ref", "description": "The order number"}}}}
	a := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Sales desk", "llm_config": cfg,
		"prompt_config": map[string]any{"prompt": "You sell plans for {{shop}}.", "welcome_message": "Hello from {{shop}}!"}})
	if a.Status != 201 {
		t.Fatalf("agent: %d %s", a.Status, a.Body)
	}
	return a.Data()["id"].(string)
}

// startTryOnDraft checks live is not offered for an agent never published, and starts
// a conversation on the draft with the welcome substituted.
func (b *browser) startTryOnDraft() {
	t := b.t
	t.Helper()
	var liveDisabled bool
	b.eval("live disabled", `document.querySelector('[data-try-start] input[value="live"]').disabled`, &liveDisabled)
	if !liveDisabled {
		t.Error("live is offered for an agent never published")
	}
	b.run("start on the draft",
		chromedp.SendKeys(`[data-try-var="shop"]`, "Acme", chromedp.ByQuery),
		chromedp.Click(`[data-try-start] button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-try-log] li.try-agent`, chromedp.ByQuery))
	if s := b.text(`[data-try-log] li.try-agent .try-text`); s != "Hello from Acme!" {
		t.Errorf("opening = %q", s)
	}
}

// sendAndReadTurn sends a message and checks the reply streams in with its tool call,
// its retrieved knowledge and its latency.
func (b *browser) sendAndReadTurn() {
	t := b.t
	t.Helper()
	b.run("send",
		chromedp.SendKeys(`[data-try-input]`, "How much is the pro plan?", chromedp.ByQuery),
		chromedp.Click(`[data-try-send] button[type="submit"]`, chromedp.ByQuery),
		tryReplied("The pro plan costs 20 euros a month."))
	// A number in the arguments, and in the result that echoes them, shows as the model
	// wrote it, never 12345678901234567000.
	if s := b.text(`[data-try-log] li.try-tool`); !strings.Contains(s, "note_plan") || !strings.Contains(s, `"plan":"pro"`) || strings.Count(s, `"ref":12345678901234567890`) != 2 {
		t.Errorf("tool call shown as %q", s)
	}
	if s := b.text(`[data-try-log] .try-knowledge`); !strings.Contains(s, "Knowledge retrieved") {
		t.Errorf("knowledge shown as %q", s)
	}
	var chunk string
	b.eval("chunk", `document.querySelector('[data-try-log] .try-chunk').textContent`, &chunk)
	if !strings.Contains(chunk, "20 euros") {
		t.Errorf("retrieved chunk = %q", chunk)
	}
	if s := b.text(`[data-try-log] li.try-agent:last-child .try-latency`); !strings.Contains(s, "ms to the first token") {
		t.Errorf("latency shown as %q", s)
	}
}

// endTryAndFindCall ends the conversation and checks the call it became: its transcript
// and its row in the call history.
func (b *browser) endTryAndFindCall() {
	t := b.t
	t.Helper()
	// The network gone, End says so (it said nothing), and the conversation stays open.
	br := b.breakRequests()
	br.set("/end", "offline")
	b.run("end offline", chromedp.Click(`[data-try-end]`, chromedp.ByQuery))
	if s := b.text(`[data-try-error]`); s != "The request did not reach the server: the conversation is still open. Press End again." {
		t.Errorf("End without a network: %q", s)
	}
	br.set("/end", "")
	b.run("end", chromedp.Click(`[data-try-end]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-try-result] a`, chromedp.ByQuery))
	// How it ended in words, as a test run's page says it, not the API's user_ended.
	if s := b.text(`[data-try-result]`); !strings.Contains(s, "(Caller ended)") {
		t.Errorf("end result = %q", s)
	}
	var errShown bool
	b.eval("error cleared", `!document.querySelector("[data-try-error]").hidden`, &errShown)
	if errShown {
		t.Error("the failed End's message stays once the conversation ended")
	}
	b.run("open the call", chromedp.Click(`[data-try-result] a`, chromedp.ByQuery),
		chromedp.WaitVisible(`ol.transcript`, chromedp.ByQuery))
	if s := b.text(`ol.transcript`); !strings.Contains(s, "20 euros") || !strings.Contains(s, "note_plan") {
		t.Errorf("the call's transcript = %q", s)
	}
	var callID string
	b.eval("call id", `location.pathname.split("/").pop()`, &callID)
	b.open("/calls")
	var listed bool
	b.eval("the call's row", `document.querySelector('#main a[href="/calls/`+callID+`"]') !== null`, &listed)
	if !listed {
		t.Errorf("the call history does not list %s", callID)
	}
}

// cutNextReply makes the page's next fetch see its reply cut off after the first frame
// (the user's item), as a dropped connection would, while the rest is still read to the
// end out of the page's sight (window.cutReplyRead): the server answers the message
// whole and keeps its answer under the message's Idempotency-Key.
const cutNextReply = `(function () {
  var orig = window.fetch;
  window.fetch = function (url, opts) {
    window.fetch = orig;
    return orig(url, opts).then(function (res) {
      var reader = res.body.getReader(), dec = new TextDecoder(), seen = "";
      function firstFrame() {
        return reader.read().then(function (r) {
          if (r.done) return seen;
          seen += dec.decode(r.value, { stream: true });
          var i = seen.indexOf("\n\n");
          return i >= 0 ? seen.slice(0, i + 2) : firstFrame();
        });
      }
      var head = firstFrame();
      window.cutReplyRead = head.then(function drain() {
        return reader.read().then(function (r) { return r.done || drain(); });
      });
      var given = false;
      var body = new ReadableStream({ pull: function (c) {
        if (given) { c.error(new TypeError("network error")); return; }
        given = true;
        return head.then(function (t) { c.enqueue(new TextEncoder().encode(t)); });
      } });
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    });
  };
  return true;
})()`

// resendAfterCutOff: a reply cut off in the browser after the server answered it puts
// the message back in the input; sending it again shows the reply once, from the answer
// the server kept under the message's key, with no second turn and no second model call.
func (b *browser) resendAfterCutOff(e *testenv.Env, stand *llmtest.Server) {
	t := b.t
	t.Helper()
	const msg = "Hello there"
	asked := len(stand.Requests())
	var ok bool
	b.eval("cut the next reply", cutNextReply, &ok)
	b.run("send, and the reply is cut off",
		chromedp.SendKeys(`[data-try-input]`, msg, chromedp.ByQuery),
		chromedp.Click(`[data-try-send] button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-try-error]`, chromedp.ByQuery))
	b.eval("the server's answer read whole", `window.cutReplyRead.then(function () { return true; })`, &ok)
	var input string
	b.eval("the input", `document.querySelector('[data-try-input]').value`, &input)
	if s := b.text(`[data-try-error]`); !strings.Contains(s, "cut off") || input != msg {
		t.Fatalf("after the cut: error %q, input %q", s, input)
	}
	b.run("send again",
		chromedp.Click(`[data-try-send] button[type="submit"]`, chromedp.ByQuery),
		tryReplied("How can I help?"))
	var users, replies int
	b.eval("user items", `[...document.querySelectorAll('[data-try-log] li.try-user')].filter(function (li) { return li.textContent.includes(`+"`"+msg+"`"+`); }).length`, &users)
	b.eval("replies", `[...document.querySelectorAll('[data-try-log] li.try-agent')].filter(function (li) { return li.textContent.includes("How can I help?"); }).length`, &replies)
	if users != 1 || replies != 1 {
		t.Errorf("the panel shows the message %d times and its reply %d times, want once each", users, replies)
	}
	if n := len(stand.Requests()) - asked; n != 1 {
		t.Errorf("the model was asked %d times for one message sent twice under its key", n)
	}
	var convID string
	b.eval("conversation id", `document.querySelector('[data-try]').dataset.conversation`, &convID)
	stored := 0
	for _, m := range e.Do(nil, "GET", "/api/v1/conversations/"+convID, e.Owner.Token, nil).Data()["messages"].([]any) {
		if m.(map[string]any)["content"] == msg {
			stored++
		}
	}
	if stored != 1 {
		t.Errorf("the conversation holds the message %d times", stored)
	}
}

// tryReplied waits for the Try panel's reply text, then for the end of its stream: the
// words show as they stream, before the turn is stored, and the Send button comes back
// only after the done frame, when the API serves the turn.
func tryReplied(text string) chromedp.Action {
	return chromedp.Tasks{
		chromedp.WaitVisible(`//li[contains(@class,"try-agent")]/span[@class="try-text"][text()="`+text+`"]`, chromedp.BySearch),
		chromedp.WaitEnabled(`[data-try-send] button[type="submit"]`, chromedp.ByQuery),
	}
}
