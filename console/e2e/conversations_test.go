package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConversationsPage: the nav opens the conversations page, which lists them newest
// first twenty a page, pages older and newer, filters by agent (picked by name) and
// status, tells a hand-edited status beside the form, and resumes an active conversation
// in its agent's Try panel, where the next message is answered in it.
func TestConversationsPage(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	stand := startSalesModel(t)
	desk := createSalesDesk(t, e, stand)
	raw, _ := json.Marshal(stand.LLMConfig())
	var cfg map[string]any
	json.Unmarshal(raw, &cfg)
	support := b.mustAPI(201, "POST", "/api/v1/agents", map[string]any{"name": "Support desk", "llm_config": cfg,
		"prompt_config": map[string]any{"prompt": "You help.", "welcome_message": "Support here."}})["id"].(string)
	start := func(agent string) string {
		return b.mustAPI(201, "POST", "/api/v1/agents/"+agent+"/conversations", map[string]any{"version": "draft",
			"variables": map[string]any{"shop": "Acme"}})["id"].(string)
	}
	for range 20 {
		b.mustAPI(200, "POST", "/api/v1/conversations/"+start(desk)+"/end", nil)
	}
	b.mustAPI(200, "POST", "/api/v1/conversations/"+start(support)+"/end", nil)
	open := start(desk)
	b.mustAPI(200, "POST", "/api/v1/conversations/"+open+"/messages", map[string]any{"content": "hello"})
	supportOpen := start(support)

	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.follow("the nav's Conversations", chromedp.Click(`nav[aria-label="Sections"] a[href="/conversations"]`, chromedp.ByQuery))
	rows := func() []string {
		var out []string
		b.eval("rows", `Array.from(document.querySelectorAll("#conversations tbody tr"), tr => tr.dataset.conversation)`, &out)
		return out
	}
	first := rows()
	if len(first) != 20 || first[0] != supportOpen || first[1] != open {
		t.Fatalf("the first page: %v, want 20 starting with [%s %s]", first, supportOpen, open)
	}
	b.audit("conversations")
	b.followText("Older conversations")
	if older := rows(); len(older) != 3 || slices.ContainsFunc(older, func(id string) bool { return slices.Contains(first, id) }) {
		t.Errorf("the older page: %v, want the 3 others", older)
	}
	b.followText("Newer conversations")
	if got := rows(); !slices.Equal(got, first) {
		t.Errorf("the newer page: %v, want the first", got)
	}

	b.setSelect("#cv-agent", desk)
	b.setSelect("#cv-status", "active")
	b.submit("#cv-status")
	if got := rows(); !slices.Equal(got, []string{open}) {
		t.Fatalf("Sales desk, active: %v, want [%s]", got, open)
	}
	if s := b.text(`[data-conversation="` + open + `"]`); !strings.Contains(s, "Sales desk") || !strings.Contains(s, "Draft") || !strings.Contains(s, "Active") {
		t.Errorf("the row reads %q", s)
	}
	var search string
	b.eval("the URL's query", `location.search`, &search)
	if !strings.Contains(search, "agent_id="+desk) || !strings.Contains(search, "status=active") {
		t.Errorf("the filters are not in the URL: %q", search)
	}

	b.open("/conversations?status=open")
	if msg := b.text(".alert"); !strings.Contains(msg, "must be one of: active, ended") {
		t.Errorf("a hand-edited status: %q", msg)
	}

	b.open("/conversations?status=active&agent_id=" + desk)
	b.follow("resume", chromedp.Click(`[data-conversation="`+open+`"] a[data-resume]`, chromedp.ByQuery))
	b.run("the panel resumes it",
		chromedp.WaitVisible(`[data-try-chat]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-try-log] li.try-user`, chromedp.ByQuery))
	if s := b.text(`[data-try-log]`); !strings.Contains(s, "Hello from Acme!") || !strings.Contains(s, "hello") {
		t.Errorf("the resumed conversation shows %q", s)
	}
	b.run("send in it",
		chromedp.SendKeys(`[data-try-input]`, "And the pro plan?", chromedp.ByQuery),
		chromedp.Click(`[data-try-send] button[type="submit"]`, chromedp.ByQuery),
		tryReplied("The pro plan costs 20 euros a month."))
	msgs := b.mustAPI(200, "GET", "/api/v1/conversations/"+open, nil)["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); last["content"] != "The pro plan costs 20 euros a month." {
		t.Errorf("the message went elsewhere: the resumed conversation ends with %v", last)
	}

	// The panel's Recent conversations lead back to the page, filtered by the agent.
	b.follow("all of the agent's", chromedp.Click(`[data-try-all]`, chromedp.ByQuery))
	var search2 string
	b.eval("the URL's query", `location.search`, &search2)
	if got := rows(); search2 != "?agent_id="+desk || len(got) != 20 || got[0] != open || slices.Contains(got, supportOpen) {
		t.Errorf("the agent's conversations from the panel (%s): %d rows %v", search2, len(got), got)
	}
}
