package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestTryResume: the "Try it" panel lists the agent's conversations, newest first; an
// ended one links to its call, an active one started elsewhere (the API, another tab) is
// resumed with its messages so far, and the next message is answered in it.
func TestTryResume(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	stand := startSalesModel(t)
	id := createSalesDesk(t, e, stand)
	start := func(shop string) string {
		r := e.Do(nil, "POST", "/api/v1/agents/"+id+"/conversations", e.Owner.Token, map[string]any{"version": "draft", "variables": map[string]any{"shop": shop}})
		if r.Status != 201 {
			t.Fatalf("start: %d %s", r.Status, r.Body)
		}
		return r.Data()["id"].(string)
	}
	open := start("Acme")
	if r := e.Do(nil, "POST", "/api/v1/conversations/"+open+"/messages", e.Owner.Token, map[string]any{"content": "hello"}); r.Status != 200 {
		t.Fatalf("message: %d %s", r.Status, r.Body)
	}
	done := start("Bolt")
	end := e.Do(nil, "POST", "/api/v1/conversations/"+done+"/end", e.Owner.Token, nil)
	if end.Status != 200 {
		t.Fatalf("end: %d %s", end.Status, end.Body)
	}
	callID := end.Data()["id"].(string)

	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/agents/" + id)
	b.run("the list loads", chromedp.WaitVisible(`[data-try-list]`, chromedp.ByQuery))
	var rows []string
	b.eval("rows", `Array.from(document.querySelectorAll('[data-try-row]')).map(r => r.dataset.tryRow)`, &rows)
	if len(rows) != 2 || rows[0] != done || rows[1] != open {
		t.Fatalf("listed %v, want [%s %s] (newest first)", rows, done, open)
	}
	var href string
	b.eval("the ended one's call", `document.querySelector('[data-try-row="`+done+`"] a').getAttribute('href')`, &href)
	if href != "/calls/"+callID {
		t.Errorf("the ended conversation links to %q, want its call", href)
	}
	var endedResumable bool
	b.eval("no resume of the ended one", `!!document.querySelector('[data-try-row="`+done+`"] [data-try-resume]')`, &endedResumable)
	if endedResumable {
		t.Error("an ended conversation is offered to resume")
	}
	b.run("resume the active one",
		chromedp.Click(`[data-try-resume="`+open+`"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-try-chat]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-try-log] li.try-user`, chromedp.ByQuery))
	if s := b.text(`[data-try-log]`); !strings.Contains(s, "Hello from Acme!") || !strings.Contains(s, "hello") || !strings.Contains(s, "How can I help?") {
		t.Errorf("the resumed conversation shows %q", s)
	}
	b.run("send in it",
		chromedp.SendKeys(`[data-try-input]`, "And the pro plan?", chromedp.ByQuery),
		chromedp.Click(`[data-try-send] button[type="submit"]`, chromedp.ByQuery),
		tryReplied("The pro plan costs 20 euros a month."))
	msgs := e.Do(nil, "GET", "/api/v1/conversations/"+open, e.Owner.Token, nil).Data()["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); last["content"] != "The pro plan costs 20 euros a month." {
		t.Errorf("the message went elsewhere: the resumed conversation ends with %v", last)
	}
}
