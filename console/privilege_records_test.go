package console_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// consoleAgent is an agent of the console's privilege test and the records it owns, each
// named after it so that a page showing any of them shows the agent's name.
type consoleAgent struct {
	id, name               string
	test, campaign, call   string
	testName, campaignName string
}

// makeConsoleAgent creates and publishes an agent named name, with a test, a call and a
// campaign calling from number, through the API as the owner.
func makeConsoleAgent(t *testing.T, e *testenv.Env, name, number string, i int) consoleAgent {
	t.Helper()
	a := consoleAgent{name: name, testName: name + " greets", campaignName: name + " reminders"}
	a.id = createAgent(t, e, e.Owner.Token, name)
	tok := e.Owner.Token
	mustDo := func(method, path string, body any, status int) map[string]any {
		res := e.Do(nil, method, path, tok, body)
		if res.Status != status {
			t.Fatalf("%s %s: %d %s", method, path, res.Status, res.Body)
		}
		return res.Data()
	}
	mustDo("POST", "/api/v1/agents/"+a.id+"/publish", nil, http.StatusNoContent)
	a.test = mustDo("POST", "/api/v1/agents/"+a.id+"/tests", map[string]any{"name": a.testName,
		"user": map[string]any{"script": []string{"Hello"}}, "criteria": []any{map[string]any{"type": "says", "pattern": "Welcome"}}}, http.StatusCreated)["id"].(string)
	a.call = mustDo("POST", "/api/v1/calls", map[string]any{"agent_id": a.id, "direction": "web", "status": "ended",
		"transcript": []any{map[string]any{"role": "user", "content": "Hello " + name}}}, http.StatusCreated)["id"].(string)
	window := map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, "start": "00:00", "end": "23:59"}
	a.campaign = mustDo("POST", "/api/v1/campaigns", map[string]any{"name": a.campaignName, "agent_id": a.id, "number_id": number,
		"window": window, "max_concurrent": 1, "recipients": []any{map[string]any{"phone_number": fmt.Sprintf("+1415555040%d", i)}}}, http.StatusCreated)["id"].(string)
	return a
}

// TestConsoleShowsAMemberOnlyItsAgents: a developer limited to agent A signs in to the
// console; the agents, calls, campaigns, tests, analytics and number pages (with their
// forms' agent choices) show A's records and nothing of B's or C's, whose pages are 404.
func TestConsoleShowsAMemberOnlyItsAgents(t *testing.T) {
	e := testenv.Start(t)
	res := e.Do(nil, "POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550100", "provider": "twilio"})
	if res.Status != http.StatusCreated {
		t.Fatalf("create number: %d %s", res.Status, res.Body)
	}
	number := res.Data()["id"].(string)
	var agents []consoleAgent
	for i, name := range []string{"Alpha line", "Bravo line", "Charlie line"} {
		agents = append(agents, makeConsoleAgent(t, e, name, number, i))
	}
	mine, others := agents[0], agents[1:]
	dev := e.NewUser("limited@example.com", false)
	addMember(t, e, dev, map[string]any{"role": "developer", "agent_ids": []string{mine.id}})
	s := e.SignIn(dev, e.Owner.WorkspaceID)

	pages := map[string][]string{ // a page, and what of A's it must show
		"/agents":                          {mine.id, mine.name},
		"/agents/" + mine.id:               {mine.name},
		"/agents/" + mine.id + "/versions": {mine.name},
		"/agents/" + mine.id + "/tests":    {mine.testName},
		"/agents/" + mine.id + "/analysis": {mine.name},
		"/calls":                           {mine.call},
		"/calls/" + mine.call:              {mine.call},
		"/campaigns":                       {mine.campaignName},
		"/campaigns/" + mine.campaign:      {mine.campaignName},
		"/analytics":                       {mine.name},
		"/numbers/" + number:               {mine.name},
		// Pages that may show nothing of A, but nothing of B's or C's either.
		"/numbers":                                  nil,
		"/conversations":                            nil,
		"/workspace":                                nil,
		"/agents/" + mine.id + "/try":               nil,
		"/agents/" + mine.id + "/rollout-panel":     nil,
		"/campaigns/" + mine.campaign + "/progress": nil,
	}
	for path, shows := range pages {
		res := e.Do(s.Client, "GET", path, "", nil)
		page := string(res.Body)
		if res.Status != http.StatusOK {
			t.Errorf("%s: %d", path, res.Status)
			continue
		}
		for _, want := range shows {
			if !strings.Contains(page, want) {
				t.Errorf("%s does not show %q", path, want)
			}
		}
		for _, o := range others {
			for _, hidden := range []string{o.id, o.name, o.testName, o.campaignName, o.campaign, o.call, o.test} {
				if strings.Contains(page, hidden) {
					t.Errorf("%s shows %q of another agent", path, hidden)
				}
			}
		}
	}
	// The home page's first steps begin by adding an agent, which such a member may not:
	// it goes to its first section instead.
	if res := e.Do(s.Client, "GET", "/", "", nil); res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/agents" {
		t.Errorf("/: %d to %q, want 303 to /agents", res.Status, res.Header.Get("Location"))
	}
	for _, o := range others {
		for _, path := range []string{"/agents/" + o.id, "/agents/" + o.id + "/tests", "/agents/" + o.id + "/tests/" + o.test,
			"/agents/" + mine.id + "/tests/" + o.test, "/calls/" + o.call, "/campaigns/" + o.campaign} {
			if res := e.Do(s.Client, "GET", path, "", nil); res.Status != http.StatusNotFound {
				t.Errorf("%s: %d, want 404", path, res.Status)
			}
		}
	}
}

// numberAnsweredBy makes, as the owner, a number whose inbound calls agent answers.
func numberAnsweredBy(t *testing.T, e *testenv.Env, phone, agent string) string {
	t.Helper()
	res := e.Do(nil, "POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": phone, "provider": "twilio", "inbound_agent_id": agent})
	if res.Status != http.StatusCreated {
		t.Fatalf("create number: %d %s", res.Status, res.Body)
	}
	return res.Data()["id"].(string)
}

// TestConsoleNumberOfAnotherAgentIsNotOffered: a number that routes calls of an agent
// the developer does not see is not theirs to change (the API's 403): its page offers
// neither the save nor the delete, and says why; a number of their own agent offers both.
// The campaign form offers only the latter to dial from (the API's 422 on number_id).
func TestConsoleNumberOfAnotherAgentIsNotOffered(t *testing.T) {
	e := testenv.Start(t)
	mine, other := createAgent(t, e, e.Owner.Token, "Alpha line"), createAgent(t, e, e.Owner.Token, "Bravo line")
	ofMine, ofOther := numberAnsweredBy(t, e, "+14155550101", mine), numberAnsweredBy(t, e, "+14155550102", other)
	dev := e.NewUser("limited@example.com", false)
	addMember(t, e, dev, map[string]any{"role": "developer", "agent_ids": []string{mine}})
	s := e.SignIn(dev, e.Owner.WorkspaceID)
	for id, offered := range map[string]bool{ofMine: true, ofOther: false} {
		res := e.Do(s.Client, "GET", "/numbers/"+id, "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("/numbers/%s: %d", id, res.Status)
		}
		page := string(res.Body)
		for _, offer := range []string{"Save bindings and variables", "Delete this number"} {
			if strings.Contains(page, offer) != offered {
				t.Errorf("/numbers/%s offers %q: %v, want %v", id, offer, !offered, offered)
			}
		}
		if says := strings.Contains(page, "outside your access"); says == offered {
			t.Errorf("/numbers/%s says it routes another agent's calls: %v, want %v", id, says, !offered)
		}
	}
	// Nor is it offered to dial from: a campaign's create naming it is refused (422).
	res := e.Do(s.Client, "GET", "/campaigns", "", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("/campaigns: %d", res.Status)
	}
	for id, offered := range map[string]bool{ofMine: true, ofOther: false} {
		if got := strings.Contains(string(res.Body), `value="`+id+`"`); got != offered {
			t.Errorf("the campaign form offers number %s: %v, want %v", id, got, offered)
		}
	}
}

// TestConsoleMembersNameOnlyTheUsersAgents: the workspace page's member list, read by a
// developer limited to agent A, names no agent of another's: a member limited to B alone
// reads as limited to no agent (the API shows such a list as agt_000…, "No agent").
func TestConsoleMembersNameOnlyTheUsersAgents(t *testing.T) {
	e := testenv.Start(t)
	mine, other := createAgent(t, e, e.Owner.Token, "Alpha line"), createAgent(t, e, e.Owner.Token, "Bravo line")
	addMember(t, e, e.NewUser("bravo@example.com", false), map[string]any{"role": "developer", "agent_ids": []string{other}})
	dev := e.NewUser("limited@example.com", false)
	addMember(t, e, dev, map[string]any{"role": "developer", "agent_ids": []string{mine}})
	s := e.SignIn(dev, e.Owner.WorkspaceID)
	res := e.Do(s.Client, "GET", "/workspace", "", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("/workspace: %d", res.Status)
	}
	page := string(res.Body)
	_, rest, _ := strings.Cut(other, "_")
	for _, hidden := range []string{other, "Bravo line", rest[len(rest)-6:]} {
		if strings.Contains(page, hidden) {
			t.Errorf("/workspace shows %q of another agent", hidden)
		}
	}
	if !strings.Contains(page, "No agent") || !strings.Contains(page, "Alpha line") {
		t.Errorf("/workspace does not show the members' agents as the developer sees them")
	}
}

// TestConsoleKnowledgeBaseOfAnotherAgentIsNotOffered: a knowledge base an agent the
// developer does not see uses is not theirs to change (the API's 403): its page offers no
// upload, rename, delete, source removal or refetch, and says why without naming the
// agent; a knowledge base only their agent uses offers them all.
func TestConsoleKnowledgeBaseOfAnotherAgentIsNotOffered(t *testing.T) {
	e := testenv.Start(t)
	kb := func(name string) string {
		res := e.Do(nil, "POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": name,
			"texts": []any{map[string]any{"title": "Hours", "content": "We open at nine."}}, "urls": []any{"https://example.com/faq"}})
		if res.Status != http.StatusCreated {
			t.Fatalf("create knowledge base: %d %s", res.Status, res.Body)
		}
		return res.Data()["id"].(string)
	}
	ofMine, ofOther := kb("Alpha facts"), kb("Bravo facts")
	agent := func(name, kbID string) string {
		res := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": name, "llm_config": map[string]any{"knowledge_base_ids": []string{kbID}}})
		if res.Status != http.StatusCreated {
			t.Fatalf("create agent: %d %s", res.Status, res.Body)
		}
		return res.Data()["id"].(string)
	}
	mine, other := agent("Alpha line", ofMine), agent("Bravo line", ofOther)
	dev := e.NewUser("limited@example.com", false)
	addMember(t, e, dev, map[string]any{"role": "developer", "agent_ids": []string{mine}})
	s := e.SignIn(dev, e.Owner.WorkspaceID)
	for id, offered := range map[string]bool{ofMine: true, ofOther: false} {
		res := e.Do(s.Client, "GET", "/knowledge-bases/"+id, "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("/knowledge-bases/%s: %d", id, res.Status)
		}
		page := string(res.Body)
		for _, offer := range []string{"Upload files", ">Rename<", "Delete this knowledge base", "Remove…", "Fetch again"} {
			if strings.Contains(page, offer) != offered {
				t.Errorf("/knowledge-bases/%s offers %q: %v, want %v", id, offer, !offered, offered)
			}
		}
		if says := strings.Contains(page, "used by an agent outside your access"); says == offered {
			t.Errorf("/knowledge-bases/%s says another agent uses it: %v, want %v", id, says, !offered)
		}
		if strings.Contains(page, other) || strings.Contains(page, "Bravo line") {
			t.Errorf("/knowledge-bases/%s names the hidden agent", id)
		}
	}
	if kb := e.Do(nil, "GET", "/api/v1/knowledge-bases/"+ofOther, e.Owner.Token, nil); kb.Data()["name"] != "Bravo facts" {
		t.Errorf("the page's question changed the knowledge base: %s", kb.Body)
	}
}

// TestConsoleNumberDialedForAnotherAgentIsNotOffered: a number bound to no agent, which
// an open campaign of an agent the developer does not see dials from, is not theirs to
// change either (the API's 403): the page, which cannot see that campaign, reads the
// API's access and offers neither the save nor the delete, and says why. A number their
// own agent's campaign dials from offers both.
func TestConsoleNumberDialedForAnotherAgentIsNotOffered(t *testing.T) {
	e := testenv.Start(t)
	number := func(phone string) string {
		res := e.Do(nil, "POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": phone, "provider": "twilio"})
		if res.Status != http.StatusCreated {
			t.Fatalf("create number: %d %s", res.Status, res.Body)
		}
		return res.Data()["id"].(string)
	}
	ofMine, ofOther := number("+14155550101"), number("+14155550102")
	mine := makeConsoleAgent(t, e, "Alpha line", ofMine, 0)
	makeConsoleAgent(t, e, "Bravo line", ofOther, 1)
	dev := e.NewUser("limited@example.com", false)
	addMember(t, e, dev, map[string]any{"role": "developer", "agent_ids": []string{mine.id}})
	s := e.SignIn(dev, e.Owner.WorkspaceID)
	for id, offered := range map[string]bool{ofMine: true, ofOther: false} {
		res := e.Do(s.Client, "GET", "/numbers/"+id, "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("/numbers/%s: %d", id, res.Status)
		}
		page := string(res.Body)
		for _, offer := range []string{"Save bindings and variables", "Delete this number"} {
			if strings.Contains(page, offer) != offered {
				t.Errorf("/numbers/%s offers %q: %v, want %v", id, offer, !offered, offered)
			}
		}
		if says := strings.Contains(page, "outside your access"); says == offered {
			t.Errorf("/numbers/%s says it serves another agent: %v, want %v", id, says, !offered)
		}
		if strings.Contains(page, "Bravo line") {
			t.Errorf("/numbers/%s names the hidden agent", id)
		}
	}
	// Nor does the campaign form offer it to dial from (a create naming it is the API's
	// 422 on number_id): the form reads the list's access.dial, not the bindings.
	res := e.Do(s.Client, "GET", "/campaigns", "", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("/campaigns: %d", res.Status)
	}
	for id, offered := range map[string]bool{ofMine: true, ofOther: false} {
		if got := strings.Contains(string(res.Body), `value="`+id+`"`); got != offered {
			t.Errorf("the campaign form offers number %s: %v, want %v", id, got, offered)
		}
	}
	// What it offers the API accepts, and what it leaves out the API refuses.
	window := map[string]any{"days": []string{"mon"}, "start": "09:00", "end": "17:00"}
	tok := testkit.APIKey(t, cli.NewServices(e.DB), dev.ID, e.Owner.WorkspaceID)
	for id, status := range map[string]int{ofMine: http.StatusCreated, ofOther: http.StatusUnprocessableEntity} {
		got := e.Do(nil, "POST", "/api/v1/campaigns", tok, map[string]any{"name": "Mine " + id, "agent_id": mine.id, "number_id": id,
			"window": window, "max_concurrent": 1, "recipients": []any{map[string]any{"phone_number": "+14155550499"}}})
		if got.Status != status {
			t.Errorf("a campaign dialing from %s: %d %s, want %d", id, got.Status, got.Body, status)
		}
	}
}

// TestConsoleConversationsOfAMemberOnlyItsAgents: a developer limited to agent A opens
// the conversations page: it lists A's conversations and nothing of B's (the API
// decides), its agent picker offers A alone, and asking for B's by hand lists none.
func TestConsoleConversationsOfAMemberOnlyItsAgents(t *testing.T) {
	e := testenv.Start(t)
	stand := llmtest.New(t, data.LLMInternal)
	mine, other := convAgent(t, e, stand, "Alpha line"), convAgent(t, e, stand, "Bravo line")
	mineActive, otherActive := startConv(t, e, mine), startConv(t, e, other)
	mineEnded, otherEnded := startConv(t, e, mine), startConv(t, e, other)
	mineCall, otherCall := endConv(t, e, mineEnded), endConv(t, e, otherEnded)
	dev := e.NewUser("limited@example.com", false)
	addMember(t, e, dev, map[string]any{"role": "developer", "agent_ids": []string{mine}})
	s := e.SignIn(dev, e.Owner.WorkspaceID)

	for _, path := range []string{"/conversations", "/conversations?status=active", "/conversations?status=ended", "/conversations?agent_id=" + mine} {
		res := e.Do(s.Client, "GET", path, "", nil)
		page := string(res.Body)
		if res.Status != http.StatusOK {
			t.Errorf("%s: %d", path, res.Status)
			continue
		}
		for _, hidden := range []string{other, "Bravo line", otherActive, otherEnded, otherCall} {
			if strings.Contains(page, hidden) {
				t.Errorf("%s shows %q of another agent", path, hidden)
			}
		}
	}
	page := string(e.Do(s.Client, "GET", "/conversations", "", nil).Body)
	if got := conversationRows(page); len(got) != 2 || got[0] != mineEnded || got[1] != mineActive {
		t.Errorf("lists %v, want A's [%s %s]", got, mineEnded, mineActive)
	}
	if !strings.Contains(page, `href="/calls/`+mineCall+`"`) || !strings.Contains(page, ">Alpha line<") {
		t.Error("A's conversations are not shown with their call and agent")
	}
	if n := strings.Count(regexp.MustCompile(`(?s)<select id="cv-agent".*?</select>`).FindString(page), "<option"); n != 2 {
		t.Errorf("the agent picker offers %d options, want Any and A", n)
	}
	// B's asked for by hand: the API lists none (no 404, no hint it exists).
	byHand := e.Do(s.Client, "GET", "/conversations?agent_id="+other, "", nil)
	if got := conversationRows(string(byHand.Body)); byHand.Status != http.StatusOK || len(got) != 0 {
		t.Errorf("B's by hand: %d %v", byHand.Status, got)
	}
}

// TestConsoleNumbersNameNoHiddenAgent: the numbers page and a number's page, read by a
// developer limited to agent A, show a number bound to agent B as bound to "An agent
// outside your access", naming B neither by name, nor by id, nor by its id's short form
// (the API reads B's binding as data.HiddenAgent to such a caller).
func TestConsoleNumbersNameNoHiddenAgent(t *testing.T) {
	e := testenv.Start(t)
	mine, other := createAgent(t, e, e.Owner.Token, "Alpha line"), createAgent(t, e, e.Owner.Token, "Bravo line")
	ofOther := numberAnsweredBy(t, e, "+14155550102", other)
	dev := e.NewUser("limited@example.com", false)
	addMember(t, e, dev, map[string]any{"role": "developer", "agent_ids": []string{mine}})
	s := e.SignIn(dev, e.Owner.WorkspaceID)
	_, rest, _ := strings.Cut(other, "_")
	for _, path := range []string{"/numbers", "/numbers/" + ofOther} {
		res := e.Do(s.Client, "GET", path, "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("%s: %d", path, res.Status)
		}
		page := string(res.Body)
		for _, hidden := range []string{other, "Bravo line", rest[len(rest)-6:]} {
			if strings.Contains(page, hidden) {
				t.Errorf("%s shows %q of another agent", path, hidden)
			}
		}
		if !strings.Contains(page, "An agent outside your access") {
			t.Errorf("%s does not say the number is bound to an agent outside the developer's access", path)
		}
	}
}
