package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/data"
)

// TestTryResumeOnlyItsAgentsVisibleConversation: an agent page's ?resume= opens only a
// conversation of that agent the user may see. A member limited to agents A and C opens
// A's page naming a conversation of agent B, hidden from them: the panel shows the API's
// 404 and nothing of the conversation; naming one of C (which they see): the panel of A
// refuses it rather than talk to C under A's name, and links to C's page; naming one of
// A's draft, which a member may not talk to: told so, not opened.
func TestTryResumeOnlyItsAgentsVisibleConversation(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	stand := startSalesModel(t)
	a, hidden, other := createSalesDesk(t, e, stand), createSalesDesk(t, e, stand), createSalesDesk(t, e, stand)
	start := func(agent, shop string) string {
		r := e.Do(nil, "POST", "/api/v1/agents/"+agent+"/conversations", e.Owner.Token, map[string]any{"version": "draft", "variables": map[string]any{"shop": shop}})
		if r.Status != 201 {
			t.Fatalf("start: %d %s", r.Status, r.Body)
		}
		return r.Data()["id"].(string)
	}
	hiddenConv, otherConv, draftConv := start(hidden, "Hiddenshop"), start(other, "Othershop"), start(a, "Draftshop")
	mia := e.NewUser("mia@example.com", false)
	b.mustAPI(http.StatusCreated, "POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users",
		map[string]any{"id": mia.ID, "role": data.RoleMember, "modules": []string{data.ModuleAgents}, "agent_ids": []string{a, other}})
	b.signIn(mia.Email, mia.Password, e.Owner.WorkspaceID)

	b.open("/agents/" + a + "?resume=" + hiddenConv + "#try")
	b.run("the hidden agent's conversation is refused", chromedp.WaitVisible(`[data-try-error]`, chromedp.ByQuery))
	if msg := b.text(`[data-try-error]`); msg != "Conversation not found." {
		t.Errorf("the panel says %q, want the API's 404", msg)
	}
	var chatShown bool
	b.eval("the chat", `!document.querySelector('[data-try-chat]').hidden`, &chatShown)
	if page := b.text("main"); chatShown || strings.Contains(page, "Hiddenshop") || strings.Contains(page, hidden) {
		t.Errorf("the page shows the hidden agent's conversation (chat shown %v): %q", chatShown, page)
	}

	b.open("/agents/" + a + "?resume=" + otherConv + "#try")
	b.run("another agent's conversation is not opened here", chromedp.WaitVisible(`[data-try-error]`, chromedp.ByQuery))
	if msg := b.text(`[data-try-error]`); !strings.Contains(msg, "another agent") {
		t.Errorf("the panel says %q, want that the conversation is another agent's", msg)
	}
	var link string
	b.eval("the link", `(document.querySelector('[data-try-error] a') || {href: ""}).getAttribute?.('href') ?? ""`, &link)
	if link != "/agents/"+other+"?resume="+otherConv+"#try" {
		t.Errorf("the refusal links to %q, want the conversation's own agent's page", link)
	}
	var log string
	b.eval("the chat", `!document.querySelector('[data-try-chat]').hidden`, &chatShown)
	b.eval("the log", `document.querySelector('[data-try-log]').textContent`, &log)
	if chatShown || strings.Contains(log, "Othershop") {
		t.Errorf("A's panel opened C's conversation (chat shown %v): %q", chatShown, log)
	}

	// Its own agent's conversation with the draft, which a member may not talk to (the
	// API refuses its messages): told, not opened.
	b.open("/agents/" + a + "?resume=" + draftConv + "#try")
	b.run("a draft's conversation is not opened for a member", chromedp.WaitVisible(`[data-try-error]`, chromedp.ByQuery))
	if msg := b.text(`[data-try-error]`); !strings.Contains(msg, "draft") {
		t.Errorf("the panel says %q, want that the conversation is with the draft", msg)
	}
	b.eval("the chat", `!document.querySelector('[data-try-chat]').hidden`, &chatShown)
	if chatShown {
		t.Error("a member's panel opened a conversation with the draft, whose messages the API refuses it")
	}
}
