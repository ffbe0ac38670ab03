package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestCampaignFormFindsAnAgentPastTheFirstHundred: with 106 agents, the campaign form's
// agent picker shows the newest 100 and a search. The name typed first stays; "zebra"
// and Enter in the search field bring back the form, unfolded, with the name still in
// it and the oldest agent among the matches; chosen, it starts the campaign. The page
// passes the accessibility audit with the search shown, and so do the calls page's
// filter form with its pickers' search and More buttons, the API key form, a number's
// form and the workspace's member forms.
func TestCampaignFormFindsAnAgentPastTheFirstHundred(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	far := b.mustAPI(201, "POST", "/api/v1/agents", map[string]any{"name": "Zebra far"})["id"].(string)
	b.mustAPI(204, "POST", "/api/v1/agents/"+far+"/publish", nil)
	for i := range 105 {
		b.mustAPI(201, "POST", "/api/v1/agents", map[string]any{"name": fmt.Sprintf("Desk %03d", i)})
	}
	n := b.mustAPI(201, "POST", "/api/v1/numbers", map[string]any{"phone_number": "+14155550190", "provider": "sip"})["id"].(string)
	csv := filepath.Join(t.TempDir(), "list.csv")
	os.WriteFile(csv, []byte("phone_number\n+14155550101\n"), 0o600)

	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/campaigns")
	b.clickText("Start a campaign")
	b.run("name", chromedp.WaitVisible("#c-name", chromedp.ByQuery), chromedp.SendKeys("#c-name", "Spring", chromedp.ByQuery))
	var options int
	b.eval("first page", `document.querySelectorAll("#c-agent option").length`, &options)
	if options != 101 { // None and the newest 100
		t.Errorf("the picker shows %d options, want 101", options)
	}
	b.follow("find zebra", chromedp.SendKeys("#c-agent-q", "zebra"+kb.Enter, chromedp.ByQuery))
	var state struct {
		Open    bool
		Name    string
		Options []string
		URL     string
		Focused string
	}
	b.eval("after Find", `({open: document.querySelector("#new-campaign").open, name: document.querySelector("#c-name").value,
		options: Array.from(document.querySelectorAll("#c-agent option")).map(o => o.textContent), url: location.href,
		focused: document.activeElement.id})`, &state)
	if !state.Open || state.Name != "Spring" || strings.Join(state.Options, "|") != "None|Zebra far" || strings.Contains(state.URL, "csrf_token") || state.Focused != "c-agent" {
		t.Fatalf("after Find: %+v", state)
	}
	if s := b.text("#c-agent-found"); !strings.Contains(s, "zebra") {
		t.Errorf("the picker does not say what it shows: %q", s)
	}
	b.audit("campaign-picker")

	b.setSelect("#c-agent", far)
	b.setSelect("#c-number", n)
	b.run("file", chromedp.SetUploadFiles("#c-file", []string{csv}, chromedp.ByQuery))
	b.follow("start", chromedp.Click(`//button[normalize-space(.)="Start campaign"]`, chromedp.BySearch))
	b.waitText("created with 1 recipient")
	list, _ := b.api("GET", "/api/v1/campaigns", nil).JSON()["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["agent_id"] != far {
		t.Errorf("campaigns: %v, want one of %s", list, far)
	}

	// A filter form's picker: the search takes its row, at every width the audit checks.
	b.open("/calls")
	b.follow("find on the calls page", chromedp.SendKeys("#c-agent-q", "zebra"+kb.Enter, chromedp.ByQuery))
	var focused string
	b.eval("focus", `document.activeElement.id`, &focused)
	if focused != "c-agent" || !strings.Contains(b.text("#c-agent-found"), "zebra") {
		t.Errorf("the calls page after Find: focus on %q, %q", focused, b.text("#c-agent-found"))
	}
	b.audit("calls-picker")

	// The other forms' pickers with their search, a member's among them, pass the same
	// audit: the API key form's, a number's, and the workspace's member forms.
	bob := e.NewUser("bob@example.com", false)
	b.mustAPI(201, "POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users", map[string]any{"id": bob.ID, "role": "developer"})
	for name, page := range map[string]string{"keys-picker": "/api-keys?find_agent_ids=desk", "number-picker": "/numbers/" + n + "?find_inbound_agent_id=zebra",
		"member-picker": "/workspace?find_m-" + bob.ID + "=desk"} {
		b.open(page)
		b.audit(name)
	}
}

// TestEditorKnowledgeBasesPastTheFirstHundred: with 101 knowledge bases, the agent
// editor's picker shows 100 and a More button, which adds the oldest; checked and saved,
// it is the agent's, and the editor shows it again checked by its name.
func TestEditorKnowledgeBasesPastTheFirstHundred(t *testing.T) {
	b := newBrowser(t)
	archive := b.mustAPI(201, "POST", "/api/v1/knowledge-bases", map[string]any{"name": "Archive"})["id"].(string)
	for i := range 100 {
		b.mustAPI(201, "POST", "/api/v1/knowledge-bases", map[string]any{"name": fmt.Sprintf("Shelf %03d", i)})
	}
	id := b.mustAPI(201, "POST", "/api/v1/agents", map[string]any{"name": "Librarian"})["id"].(string)
	b.signIn(b.env.Owner.Email, b.env.Owner.Password, "")
	b.open("/agents/" + id)
	archiveBox := `//label[normalize-space(.)="Archive"]/input[@type="checkbox"]`
	var before int
	b.eval("before More", `document.evaluate('count(`+archiveBox+`)', document, null, XPathResult.NUMBER_TYPE, null).numberValue`, &before)
	if before != 0 {
		t.Fatal("the oldest knowledge base is shown before More")
	}
	b.run("More", chromedp.Click(`button[data-kb-more]`, chromedp.ByQuery), chromedp.WaitVisible(archiveBox, chromedp.BySearch))
	var focused, moreLeft bool
	b.eval("after More", `document.activeElement.value === `+quoteJS(archive), &focused)
	b.eval("More gone", `!document.querySelector("button[data-kb-more]")`, &moreLeft)
	if !focused || !moreLeft {
		t.Errorf("after More: focus on the added one %v, the button gone at the end %v", focused, moreLeft)
	}
	b.run("check and save", chromedp.Click(archiveBox, chromedp.BySearch), chromedp.Click(`#agent-form button[type="submit"]`, chromedp.ByQuery))
	b.waitInView("Saved.")
	ids := b.mustAPI(200, "GET", "/api/v1/agents/"+id, nil)["llm_config"].(map[string]any)["knowledge_base_ids"]
	if fmt.Sprint(ids) != "["+archive+"]" {
		t.Errorf("knowledge_base_ids = %v, want [%s]", ids, archive)
	}
	b.open("/agents/" + id)
	var checked bool
	b.eval("after reload", `document.evaluate('`+archiveBox+`', document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue?.checked === true`, &checked)
	if !checked {
		t.Error("the editor does not show the knowledge base past the first 100 checked by its name")
	}
	b.audit("editor-kb-more")
}
