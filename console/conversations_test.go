package console_test

import (
	"encoding/json"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
)

// convAgent creates an agent named name on stand's model, with a welcome and no
// variables, so that a conversation starts on its draft without a model call.
func convAgent(t *testing.T, e *testenv.Env, stand *llmtest.Server, name string) string {
	t.Helper()
	raw, _ := json.Marshal(stand.LLMConfig())
	var cfg map[string]any
	json.Unmarshal(raw, &cfg)
	res := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": name, "llm_config": cfg,
		"prompt_config": map[string]any{"prompt": "You answer for " + name + ".", "welcome_message": "Hello from " + name}})
	if res.Status != http.StatusCreated {
		t.Fatalf("create agent: %d %s", res.Status, res.Body)
	}
	return res.Data()["id"].(string)
}

// startConv starts a conversation on agent's draft as the owner; endConv ends it and
// returns the call it became.
func startConv(t *testing.T, e *testenv.Env, agent string) string {
	t.Helper()
	res := e.Do(nil, "POST", "/api/v1/agents/"+agent+"/conversations", e.Owner.Token, map[string]any{"version": "draft"})
	if res.Status != http.StatusCreated {
		t.Fatalf("start: %d %s", res.Status, res.Body)
	}
	return res.Data()["id"].(string)
}

func endConv(t *testing.T, e *testenv.Env, id string) string {
	t.Helper()
	res := e.Do(nil, "POST", "/api/v1/conversations/"+id+"/end", e.Owner.Token, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("end: %d %s", res.Status, res.Body)
	}
	return res.Data()["id"].(string)
}

var conversationRow = regexp.MustCompile(`<tr data-conversation="([^"]+)">`)

// conversationRows are the ids of the page's rows, in order.
func conversationRows(page string) []string {
	var out []string
	for _, m := range conversationRow.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

var pagerLink = regexp.MustCompile(`<a href="(/conversations\?[^"]*)"[^>]*rel="(next|prev)"`)

// pageLinks are the pager's newer ("prev") and older ("next") links of page, unescaped.
func pageLinks(page string) map[string]string {
	out := map[string]string{}
	for _, m := range pagerLink.FindAllStringSubmatch(page, -1) {
		out[m[2]] = html.UnescapeString(m[1])
	}
	return out
}

// TestConversationsPage: /conversations lists the conversations newest first, twenty a
// page with older and newer pages carried in the URL (filters kept); filters by agent and
// status; names the agent (linked), the version or Draft, the status in words, the turns;
// links an ended one to its call and an active one to its agent's Try panel; shows a
// hand-edited filter's 422 on the form; and the Try panel links to it for its agent.
func TestConversationsPage(t *testing.T) {
	e := testenv.Start(t)
	stand := llmtest.New(t, data.LLMInternal)
	alpha, bravo := convAgent(t, e, stand, "Alpha desk"), convAgent(t, e, stand, "Bravo desk")
	var made []string // oldest first
	calls := map[string]string{}
	for range 21 {
		id := startConv(t, e, alpha)
		calls[id] = endConv(t, e, id)
		made = append(made, id)
	}
	bravoEnded := startConv(t, e, bravo)
	calls[bravoEnded] = endConv(t, e, bravoEnded)
	bravoActive := startConv(t, e, bravo)
	alphaActive := startConv(t, e, alpha)
	made = append(made, bravoEnded, bravoActive, alphaActive)
	newestFirst := slices.Clone(made)
	slices.Reverse(newestFirst)

	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	get := func(path string) string {
		t.Helper()
		res := e.Do(s.Client, "GET", path, "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, res.Status, res.Body)
		}
		return string(res.Body)
	}
	first := get("/conversations")
	if !strings.Contains(first, `href="/conversations" aria-current="page"`) {
		t.Error("the nav does not offer Conversations as the current section")
	}
	if got := conversationRows(first); !slices.Equal(got, newestFirst[:20]) {
		t.Fatalf("first page %v, want the 20 newest %v", got, newestFirst[:20])
	}
	links := pageLinks(first)
	if links["prev"] != "" || links["next"] == "" {
		t.Fatalf("first page's links %v: want only an older one", links)
	}
	second := get(links["next"])
	if got := conversationRows(second); !slices.Equal(got, newestFirst[20:]) {
		t.Errorf("older page %v, want %v", got, newestFirst[20:])
	}
	if back := pageLinks(second)["prev"]; back == "" || !slices.Equal(conversationRows(get(back)), newestFirst[:20]) {
		t.Errorf("the newer page from the older one (%q) is not the first", back)
	}

	// A row: agent by name and linked, Draft, status in words, the call or the resume.
	row := func(page, id string) string {
		m := regexp.MustCompile(`(?s)<tr data-conversation="` + id + `">.*?</tr>`).FindString(page)
		if m == "" {
			t.Fatalf("no row for %s", id)
		}
		return m
	}
	active := row(first, alphaActive)
	for _, want := range []string{`<a href="/agents/` + alpha + `">Alpha desk</a>`, "Draft", ">Active<",
		`href="/agents/` + alpha + `?resume=` + alphaActive + `#try"`} {
		if !strings.Contains(active, want) {
			t.Errorf("the active row lacks %q: %s", want, active)
		}
	}
	if strings.Contains(active, "/calls/") {
		t.Errorf("an active conversation links to a call: %s", active)
	}
	ended := row(first, bravoEnded)
	for _, want := range []string{`<a href="/agents/` + bravo + `">Bravo desk</a>`, ">Ended<", "Caller ended", `href="/calls/` + calls[bravoEnded] + `"`} {
		if !strings.Contains(ended, want) {
			t.Errorf("the ended row lacks %q: %s", want, ended)
		}
	}
	if strings.Contains(ended, "resume=") {
		t.Errorf("an ended conversation is offered to resume: %s", ended)
	}

	// Filters: the agent picker names both agents; each filter narrows; the pages keep them.
	picker := regexp.MustCompile(`(?s)<select id="cv-agent".*?</select>`).FindString(first)
	if !strings.Contains(picker, ">Alpha desk<") || !strings.Contains(picker, ">Bravo desk<") {
		t.Errorf("the agent picker: %s", picker)
	}
	if got := conversationRows(get("/conversations?agent_id=" + bravo)); !slices.Equal(got, []string{bravoActive, bravoEnded}) {
		t.Errorf("Bravo's: %v", got)
	}
	if got := conversationRows(get("/conversations?status=active")); !slices.Equal(got, []string{alphaActive, bravoActive}) {
		t.Errorf("active: %v", got)
	}
	alphaEnded := get("/conversations?agent_id=" + alpha + "&status=ended")
	if got := conversationRows(alphaEnded); len(got) != 20 || got[0] != made[20] {
		t.Errorf("Alpha's ended: %v", got)
	}
	if !regexp.MustCompile(`<option value="` + alpha + `" selected>`).MatchString(alphaEnded) {
		t.Error("the picker does not keep the agent filtered on")
	}
	older := pageLinks(alphaEnded)["next"]
	if !strings.Contains(older, "agent_id="+alpha) || !strings.Contains(older, "status=ended") {
		t.Errorf("the older page's link drops the filters: %q", older)
	}
	if got := conversationRows(get(older)); !slices.Equal(got, made[:1]) {
		t.Errorf("Alpha's ended, older page: %v, want its oldest %v", got, made[:1])
	}

	// A hand-edited filter: the API's 422, on the form, with the field's label.
	res := e.Do(s.Client, "GET", "/conversations?status=open", "", nil)
	bad := string(res.Body)
	alert := regexp.MustCompile(`(?s)<div class="alert" role="alert">.*?</div>`).FindString(bad)
	if res.Status != http.StatusOK || !strings.Contains(alert, "status is invalid; it must be one of: active, ended") {
		t.Errorf("status=open: %d, alert %q", res.Status, alert)
	}
	if !strings.Contains(bad, `<form method="get" action="/conversations"`) {
		t.Error("status=open: no filter form")
	}

	// The Try panel links to the page filtered by its agent.
	if panel := get("/agents/" + alpha + "/try"); !strings.Contains(panel, `href="/conversations?agent_id=`+alpha+`"`) {
		t.Error("the Try panel does not link to the agent's conversations")
	}
}

// TestConversationsNavFollowsTheAPIGate: Conversations is offered to the members the
// API lets list conversations (data.ConversationNeed: the agents module) and to nobody
// else, whose page is the API's refusal.
func TestConversationsNavFollowsTheAPIGate(t *testing.T) {
	e := testenv.Start(t)
	for _, c := range []struct {
		email   string
		modules []string
		offered bool
	}{
		{"agents@example.com", []string{data.ModuleAgents}, true},
		{"calls@example.com", []string{data.ModuleCallHistory, data.ModuleKnowledgeBase}, false},
	} {
		u := e.NewUser(c.email, false)
		addMember(t, e, u, map[string]any{"role": "member", "modules": c.modules})
		s := e.SignIn(u, e.Owner.WorkspaceID)
		keys := string(e.Do(s.Client, "GET", "/api-keys", "", nil).Body)
		if got := strings.Contains(keys, `href="/conversations"`); got != c.offered {
			t.Errorf("%v: Conversations offered %v, want %v", c.modules, got, c.offered)
		}
		want := http.StatusOK
		if !c.offered {
			want = http.StatusForbidden
		}
		if res := e.Do(s.Client, "GET", "/conversations", "", nil); res.Status != want {
			t.Errorf("%v: the page: %d, want %d", c.modules, res.Status, want)
		}
	}
}
