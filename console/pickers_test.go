package console_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// pickWorkspace fills the owner's workspace with 106 agents and 106 numbers: the oldest
// of each ("Zebra far", "Far line") is past the first page of 100 a picker shows, and so
// is "Zebra other", the second oldest agent.
type pickWorkspace struct {
	far, other, farNumber, aNumber string
	desks                          []string // the 104 other agents
}

func newPickWorkspace(t *testing.T, e *testenv.Env) pickWorkspace {
	t.Helper()
	var w pickWorkspace
	w.far = createAgent(t, e, e.Owner.Token, "Zebra far")
	w.other = createAgent(t, e, e.Owner.Token, "Zebra other")
	for i := range 104 {
		w.desks = append(w.desks, createAgent(t, e, e.Owner.Token, fmt.Sprintf("Desk %03d", i)))
	}
	for i := range 106 {
		body := map[string]any{"phone_number": fmt.Sprintf("+1415555%04d", i), "provider": "twilio"}
		if i == 0 {
			body["nickname"] = "Far line"
		}
		res := e.Do(nil, "POST", "/api/v1/numbers", e.Owner.Token, body)
		if res.Status != http.StatusCreated {
			t.Fatalf("number %d: %d %s", i, res.Status, res.Body)
		}
		if i == 0 {
			w.farNumber = res.Data()["id"].(string)
		}
		w.aNumber = res.Data()["id"].(string)
	}
	return w
}

// selectOf is the select with the id, "" when the page has none.
func selectOf(page, id string) string {
	return regexp.MustCompile(`(?s)<select id="` + regexp.QuoteMeta(id) + `".*?</select>`).FindString(page)
}

// option is the option for id named name, selected or not.
func option(id, name string, selected bool) string {
	s := `<option value="` + id + `"`
	if selected {
		s += ` selected`
	}
	// html/template writes a + as &#43;.
	return s + `>` + strings.ReplaceAll(html.EscapeString(name), "+", "&#43;") + `</option>`
}

// TestPickersReachPastTheFirstHundred: with 106 agents and 106 numbers, every picker of
// the console shows the newest 100 and offers a name search (agents) or the next page
// (numbers); the search finds the oldest agent, More shows the oldest number, and each,
// once chosen, stays chosen and named on a page that does not list it. A POST form's
// round-trip keeps what was typed and takes the CSRF token off the URL; a number
// created with the agent found is bound to it.
func TestPickersReachPastTheFirstHundred(t *testing.T) {
	e := testenv.Start(t)
	w := newPickWorkspace(t, e)
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	get := func(path string) string {
		t.Helper()
		res := e.Do(s.Client, "GET", path, "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, res.Status, res.Body)
		}
		return string(res.Body)
	}
	bob := e.NewUser("bob@example.com", false)
	addMember(t, e, bob, map[string]any{"role": "developer"})
	num := w.aNumber

	agentPickers := []struct{ page, id, field, key string }{
		{"/conversations", "cv-agent", "agent_id", "agent_id"},
		{"/calls", "c-agent", "agent_id", "agent_id"},
		{"/analytics", "a-agent", "agent_id", "agent_id"},
		{"/jobs", "j-agent", "agent_id", "agent_id"},
		{"/campaigns", "c-agent", "agent_id", "agent_id"},
		{"/numbers", "n-in", "inbound_agent_id", "inbound_agent_id"},
		{"/numbers", "n-out", "outbound_agent_id", "outbound_agent_id"},
		{"/numbers/" + num, "n-in", "inbound_agent_id", "inbound_agent_id"},
		{"/numbers/" + num, "n-out", "outbound_agent_id", "outbound_agent_id"},
		{"/api-keys", "key-agents", "agent_ids", "agent_ids"},
		{"/workspace", "new-agents", "agent_ids", "new"},
		{"/workspace", "m-" + bob.ID + "-agents", "agent_ids", "m-" + bob.ID},
	}
	for _, c := range agentPickers {
		first := get(c.page)
		sel := selectOf(first, c.id)
		if sel == "" || !strings.Contains(sel, ">Desk 103<") || strings.Contains(sel, w.far) {
			t.Errorf("%s #%s: the first page of agents, without the oldest: %.300s", c.page, c.id, sel)
		}
		if !strings.Contains(first, `name="find_`+c.key+`"`) {
			t.Errorf("%s #%s: no search offered with more than 100 agents", c.page, c.id)
		}
		found := get(c.page + "?" + url.Values{"find_" + c.key: {"zebra"}}.Encode())
		sel = selectOf(found, c.id)
		if !strings.Contains(sel, option(w.far, "Zebra far", false)) || !strings.Contains(sel, option(w.other, "Zebra other", false)) || strings.Contains(sel, "Desk") {
			t.Errorf("%s #%s: the search for zebra: %.400s", c.page, c.id, sel)
		}
		// Chosen, then shown again without the search: still chosen, by its name. The
		// query is a form's as sent: the forms' other fields come along (a member's role,
		// a campaign's name, a number's etag), which a form page reads it by.
		kept := get(c.page + "?" + url.Values{c.field: {w.far}, "more_" + c.key: {""}, "role": {"developer"}, "name": {"Spring"}, "etag": {`"1"`}}.Encode())
		if sel := selectOf(kept, c.id); !strings.Contains(sel, option(w.far, "Zebra far", true)) {
			t.Errorf("%s #%s: the chosen agent past the first 100 is not kept chosen and named: %.300s", c.page, c.id, sel)
		}
	}

	// A member form's round-trip shows the role as sent, and unfolds that form alone; an
	// address without the role (edited by hand) shows the stored one.
	roleOf := func(page string) string {
		m := regexp.MustCompile(`(?s)<select id="m-` + bob.ID + `-role".*?<option value="(\w+)" selected>`).FindStringSubmatch(page)
		if m == nil {
			return ""
		}
		return m[1]
	}
	member := get("/workspace?" + url.Values{"find_m-" + bob.ID: {"zebra"}, "role": {"admin"}}.Encode())
	if roleOf(member) != "admin" || strings.Count(member, "<details open>") != 1 {
		t.Errorf("a member form's round-trip: role %q, %d forms unfolded", roleOf(member), strings.Count(member, "<details open>"))
	}
	if got := roleOf(get("/workspace?find_m-" + bob.ID + "=zebra")); got != "developer" {
		t.Errorf("without the role sent: %q, want the stored developer", got)
	}

	// A number's form comes back as sent, its etag the one its values were typed against;
	// an address without the etag shows the stored number.
	typed := get("/numbers/" + num + "?" + url.Values{"find_inbound_agent_id": {"zebra"}, "nickname": {"Typed"}, "etag": {`"7"`}}.Encode())
	if !strings.Contains(typed, `value="Typed"`) || !strings.Contains(typed, `name="etag" value="&#34;7&#34;"`) {
		t.Error("the number form's round-trip does not keep what was typed and its etag")
	}
	if strings.Contains(get("/numbers/"+num+"?find_inbound_agent_id=zebra&nickname=Typed"), `value="Typed"`) {
		t.Error("an address without the etag is shown as the number's form")
	}

	// Numbers: More walks the pages of choices, to the oldest.
	for _, c := range []struct{ page, id string }{{"/calls", "c-number"}, {"/campaigns", "c-number"}} {
		first := get(c.page)
		if strings.Contains(selectOf(first, c.id), w.farNumber) {
			t.Errorf("%s: the oldest number is on the first page", c.page)
		}
		more := regexp.MustCompile(`name="more_number_id" value="([^"]+)"[^>]*>More numbers<`).FindStringSubmatch(first)
		if more == nil {
			t.Fatalf("%s: no More numbers button", c.page)
		}
		next := get(c.page + "?" + url.Values{"more_number_id": {html.UnescapeString(more[1])}}.Encode())
		if sel := selectOf(next, c.id); !strings.Contains(sel, option(w.farNumber, "Far line (+14155550000)", false)) {
			t.Errorf("%s: More numbers does not reach the oldest: %.300s", c.page, sel)
		}
		kept := get(c.page + "?" + url.Values{"number_id": {w.farNumber}, "more_number_id": {""}, "name": {"Spring"}}.Encode())
		if sel := selectOf(kept, c.id); !strings.Contains(sel, option(w.farNumber, "Far line (+14155550000)", true)) {
			t.Errorf("%s: the chosen number is not kept chosen and named: %.300s", c.page, sel)
		}
	}

	// The search is bounded as the API bounds it: at the bound it searches, past it the
	// API's refusal shows under the picker, which keeps the agent chosen.
	for _, n := range []int{255, 256} {
		page := get("/calls?" + url.Values{"find_agent_id": {strings.Repeat("é", n)}, "agent_id": {w.far}}.Encode())
		refused := strings.Contains(page, `id="c-agent-found" role="alert">The search must not be greater than 255 characters`)
		if refused != (n > 255) || !strings.Contains(selectOf(page, "c-agent"), option(w.far, "Zebra far", true)) {
			t.Errorf("a search of %d characters: refused %v, picker %.200s", n, refused, selectOf(page, "c-agent"))
		}
	}

	// A page of choices that does not follow from the search (edited since) says so.
	stale := get("/calls?" + url.Values{"find_agent_id": {"zebra"}, "more_agent_id": {"not-a-cursor"}, "agent_id": {w.far}}.Encode())
	if !strings.Contains(stale, `role="alert">These choices no longer follow from the search: press Find.`) || !strings.Contains(selectOf(stale, "c-agent"), option(w.far, "Zebra far", true)) {
		t.Errorf("a stale page of choices: %.300s", selectOf(stale, "c-agent"))
	}

	// A POST form's Find: the browser sends the whole form by GET, CSRF token and
	// Idempotency-Key included; the page sends it on without them, and shows the form as
	// typed, unfolded.
	res := e.Do(s.Client, "GET", "/campaigns?"+url.Values{"csrf_token": {"tok"}, "idempotency_key": {"k"}, "name": {"Spring"},
		"find_agent_id": {"zebra"}, "timezone": {"Europe/Paris"}}.Encode(), "", nil)
	loc := res.Header.Get("Location")
	if res.Status != http.StatusSeeOther || strings.Contains(loc, "tok") || strings.Contains(loc, "idempotency_key") || !strings.Contains(loc, "find_agent_id=zebra") {
		t.Fatalf("the round-trip with a CSRF token: %d to %q", res.Status, loc)
	}
	form := get(loc)
	for _, want := range []string{`id="new-campaign" open`, `value="Spring"`, `value="Europe/Paris"`, option(w.far, "Zebra far", false)} {
		if !strings.Contains(form, want) {
			t.Errorf("the campaign form after Find lacks %q", want)
		}
	}

	// A refused form comes back with its search's matches, the agent chosen among them.
	csrf := e.CSRF(s)
	refused := e.Do(s.Client, "POST", "/numbers", "", url.Values{"csrf_token": {csrf}, "phone_number": {"not a number"}, "provider": {"twilio"},
		"inbound_agent_id": {w.far}, "find_inbound_agent_id": {"zebra"}})
	sel := selectOf(string(refused.Body), "n-in")
	if refused.Status != http.StatusUnprocessableEntity || !strings.Contains(sel, option(w.far, "Zebra far", true)) || !strings.Contains(sel, option(w.other, "Zebra other", false)) {
		t.Errorf("the refused form: %d, its picker %.300s", refused.Status, sel)
	}

	// The agent found is the one bound: a number added with it.
	add := e.Do(s.Client, "POST", "/numbers", "", url.Values{"csrf_token": {csrf}, "phone_number": {"+14155559999"}, "provider": {"twilio"},
		"inbound_agent_id": {w.far}, "find_inbound_agent_id": {"zebra"}})
	if add.Status != http.StatusSeeOther {
		t.Fatalf("add a number bound to the agent found: %d %s", add.Status, add.Body)
	}
	bound := e.Do(nil, "GET", "/api/v1/numbers?agent_id="+w.far, e.Owner.Token, nil)
	if list, _ := bound.JSON()["data"].([]any); len(list) != 1 {
		t.Errorf("numbers bound to the agent found: %s", bound.Body)
	}
}

// TestPickerSearchShowsOnlyTheMembersAgents: a developer limited to 105 agents (Zebra
// far among them, not Zebra other) searches as themself: the API's rule, not the
// console's, decides, so the search that finds two agents for the owner finds theirs
// alone; their first page of 100 lacks Zebra far, so the search is offered.
func TestPickerSearchShowsOnlyTheMembersAgents(t *testing.T) {
	e := testenv.Start(t)
	w := newPickWorkspace(t, e)
	dev := e.NewUser("limited@example.com", false)
	addMember(t, e, dev, map[string]any{"role": "developer", "agent_ids": append([]string{w.far}, w.desks...)})
	s := e.SignIn(dev, e.Owner.WorkspaceID)
	for _, c := range []struct{ page, id, key string }{
		{"/conversations", "cv-agent", "agent_id"}, {"/calls", "c-agent", "agent_id"}, {"/campaigns", "c-agent", "agent_id"},
		{"/numbers", "n-in", "inbound_agent_id"}, {"/api-keys", "key-agents", "agent_ids"},
	} {
		page := string(e.Do(s.Client, "GET", c.page, "", nil).Body)
		if !strings.Contains(page, `name="find_`+c.key+`"`) || strings.Contains(selectOf(page, c.id), w.far) {
			t.Errorf("%s: 105 agents to see, and no search offered, or Zebra far among the first 100: %.300s", c.page, selectOf(page, c.id))
		}
		found := string(e.Do(s.Client, "GET", c.page+"?"+url.Values{"find_" + c.key: {"zebra"}}.Encode(), "", nil).Body)
		sel := selectOf(found, c.id)
		if !strings.Contains(sel, option(w.far, "Zebra far", false)) || strings.Contains(sel, w.other) || strings.Contains(found, "Zebra other") || strings.Contains(sel, "Desk") {
			t.Errorf("%s: the limited member's search: %.300s", c.page, sel)
		}
	}
}

// TestVersionComparisonReachesEveryVersion: an agent with 102 versions; the versions
// page's comparison shows the newest 100 in each of its pickers, More shows version 1,
// which, chosen, stays chosen and named while the other picker pages; the comparison
// of version 1 with the newest opens.
func TestVersionComparisonReachesEveryVersion(t *testing.T) {
	e := testenv.Start(t)
	id := createAgent(t, e, e.Owner.Token, "Prolific")
	for i := range 102 {
		if res := e.Do(nil, "PUT", "/api/v1/agents/"+id, e.Owner.Token, map[string]any{"prompt_config": map[string]any{"prompt": fmt.Sprintf("Take %d.", i)}}); res.Status != http.StatusOK {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		if res := e.Do(nil, "POST", "/api/v1/agents/"+id+"/publish", e.Owner.Token, nil); res.Status != http.StatusNoContent {
			t.Fatalf("publish: %d %s", res.Status, res.Body)
		}
	}
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	get := func(path string) string {
		t.Helper()
		res := e.Do(s.Client, "GET", path, "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.Status)
		}
		return string(res.Body)
	}
	page := "/agents/" + id + "/versions"
	first := get(page)
	for _, sel := range []string{"diff-a", "diff-b"} {
		if got := selectOf(first, sel); strings.Contains(got, `value="1"`) || !strings.Contains(got, option("102", "Version 102", false)) {
			t.Errorf("%s on the first page: %.200s", sel, got)
		}
	}
	more := regexp.MustCompile(`name="more_a" value="([^"]+)"`).FindStringSubmatch(first)
	if more == nil {
		t.Fatal("no More versions for the comparison")
	}
	older := get(page + "?" + url.Values{"more_a": {html.UnescapeString(more[1])}}.Encode())
	if got := selectOf(older, "diff-a"); !strings.Contains(got, option("1", "Version 1", false)) {
		t.Errorf("More versions does not reach version 1: %.200s", got)
	}
	kept := get(page + "?" + url.Values{"a": {"1"}, "b": {"102"}, "more_b": {""}}.Encode())
	if got := selectOf(kept, "diff-a"); !strings.Contains(got, option("1", "Version 1", true)) {
		t.Errorf("version 1 chosen is not kept: %.200s", got)
	}
	if got := selectOf(kept, "diff-b"); !strings.Contains(got, option("102", "Version 102", true)) {
		t.Errorf("version 102 chosen is not kept: %.200s", got)
	}
	get("/agents/" + id + "/diff?a=1&b=102")
}

// TestAuditActorPickerReachesEveryMember: with 106 members, the audit log's Who picker
// shows 100; More shows the others, and one of those, chosen, stays chosen and named
// with its email on the first page of choices.
func TestAuditActorPickerReachesEveryMember(t *testing.T) {
	e := testenv.Start(t)
	for i := range 105 {
		addMember(t, e, e.NewUser(fmt.Sprintf("m%03d@example.com", i), false), map[string]any{"role": "member"})
	}
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	get := func(path string) string {
		t.Helper()
		res := e.Do(s.Client, "GET", path, "", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.Status)
		}
		return string(res.Body)
	}
	ids := regexp.MustCompile(`<option value="(usr_[^"]+)"`)
	first := get("/workspace/audit")
	shown := map[string]bool{}
	for _, m := range ids.FindAllStringSubmatch(selectOf(first, "au-actor"), -1) {
		shown[m[1]] = true
	}
	more := regexp.MustCompile(`name="more_actor" value="([^"]+)"`).FindStringSubmatch(first)
	if len(shown) != 100 || more == nil {
		t.Fatalf("the first page of members: %d, More %v", len(shown), more != nil)
	}
	var past string
	for _, m := range ids.FindAllStringSubmatch(selectOf(get("/workspace/audit?"+url.Values{"more_actor": {html.UnescapeString(more[1])}}.Encode()), "au-actor"), -1) {
		if !shown[m[1]] {
			past = m[1]
		}
	}
	if past == "" {
		t.Fatal("More members shows none past the first 100")
	}
	kept := selectOf(get("/workspace/audit?actor="+past), "au-actor")
	if !regexp.MustCompile(`<option value="` + past + `" selected>[^<]+ &lt;[^&]+@example.com&gt;</option>`).MatchString(kept) {
		t.Errorf("the member chosen past the first 100 is not kept chosen and named: %.300s", kept)
	}
}

// TestWorkspaceSwitchReachesEveryWorkspace: an owner of 102 workspaces; the switch shows
// the newest 100 and the current one (the personal, the oldest) chosen by its name; its
// More is a link, which sends nothing of the form (its password), and shows the others.
func TestWorkspaceSwitchReachesEveryWorkspace(t *testing.T) {
	e := testenv.Start(t)
	var second string
	for i := range 101 {
		res := e.Do(nil, "POST", "/api/v1/workspaces", e.Owner.Token, map[string]any{"name": fmt.Sprintf("Branch %03d", i)})
		if res.Status != http.StatusCreated {
			t.Fatalf("workspace: %d %s", res.Status, res.Body)
		}
		if i == 0 {
			second = res.Data()["id"].(string)
		}
	}
	s := e.SignIn(e.Owner, "")
	page := string(e.Do(s.Client, "GET", "/workspace", "", nil).Body)
	sel := selectOf(page, "ws-switch")
	if !regexp.MustCompile(`<option value="`+e.Owner.WorkspaceID+`" selected>[^<]+</option>`).MatchString(sel) || strings.Contains(sel, second) {
		t.Errorf("the switch on the first page: %.300s", sel)
	}
	more := regexp.MustCompile(`<a class="button" href="(/workspace\?more_workspace_id=[^"#]+)#ws-switch">More workspaces</a>`).FindStringSubmatch(page)
	if more == nil {
		t.Fatal("no More workspaces link")
	}
	next := string(e.Do(s.Client, "GET", html.UnescapeString(more[1]), "", nil).Body)
	if sel := selectOf(next, "ws-switch"); !strings.Contains(sel, option(second, "Branch 000", false)) {
		t.Errorf("More workspaces does not reach Branch 000: %.300s", sel)
	}
}

// TestKnowledgeBaseDeleteNamesEveryAgentUsingIt: the delete confirmation of a knowledge
// base names the agents using it (the agents list's knowledge_base_id=), the oldest past
// the newest 100 agents included, not those that do not use it; with more than a page
// using it, it names a page and counts the others. A developer limited to one of them is
// not offered the delete at all (the API refuses it, other agents using it): the page is
// that refusal, naming none of the others; one limited to the only agent using it is
// offered it, that agent named.
func TestKnowledgeBaseDeleteNamesEveryAgentUsingIt(t *testing.T) {
	e := testenv.Start(t)
	kb := e.Do(nil, "POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": "Facts"})
	if kb.Status != http.StatusCreated {
		t.Fatalf("knowledge base: %d %s", kb.Status, kb.Body)
	}
	kbID := kb.Data()["id"].(string)
	reader := func(name string) string {
		res := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": name, "llm_config": map[string]any{"knowledge_base_ids": []string{kbID}}})
		if res.Status != http.StatusCreated {
			t.Fatalf("agent: %d %s", res.Status, res.Body)
		}
		return res.Data()["id"].(string)
	}
	reader("Old reader")
	for i := range 100 {
		createAgent(t, e, e.Owner.Token, fmt.Sprintf("Desk %03d", i))
	}
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	confirm := func(c *http.Client) string {
		return string(e.Do(c, "GET", "/knowledge-bases/"+kbID+"/delete", "", nil).Body)
	}
	if page := confirm(s.Client); !strings.Contains(page, "Retrieval from it for Old reader (") || strings.Contains(page, "Desk") || strings.Contains(page, "other agent") {
		t.Errorf("with 101 agents, the oldest using it: %s", page)
	}
	var mine string
	for i := range 100 {
		id := reader(fmt.Sprintf("Reader %03d", i))
		if i == 50 {
			mine = id
		}
	}
	page := confirm(s.Client)
	if !strings.Contains(page, "Reader 099, Reader 098") || !strings.Contains(page, "Reader 000 and 1 other agent (") || strings.Contains(page, "Old reader") {
		t.Errorf("with 101 agents using it: %s", page)
	}
	bob := e.NewUser("bob@example.com", false)
	addMember(t, e, bob, map[string]any{"role": "developer", "agent_ids": []string{mine}})
	limited := e.SignIn(bob, e.Owner.WorkspaceID)
	if page := confirm(limited.Client); !strings.Contains(page, "Not allowed") || strings.Contains(page, "Reader 0") || strings.Contains(page, "Old reader") {
		t.Errorf("a developer limited to Reader 050, one of many using it: %s", page)
	}
	solo := e.Do(nil, "POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": "Solo facts"})
	soloReader := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Solo reader", "llm_config": map[string]any{"knowledge_base_ids": []string{solo.Data()["id"].(string)}}})
	if soloReader.Status != http.StatusCreated {
		t.Fatalf("agent: %d %s", soloReader.Status, soloReader.Body)
	}
	ann := e.NewUser("ann@example.com", false)
	addMember(t, e, ann, map[string]any{"role": "developer", "agent_ids": []string{soloReader.Data()["id"].(string)}})
	annS := e.SignIn(ann, e.Owner.WorkspaceID)
	if page := string(e.Do(annS.Client, "GET", "/knowledge-bases/"+solo.Data()["id"].(string)+"/delete", "", nil).Body); !strings.Contains(page, "Retrieval from it for Solo reader (") {
		t.Errorf("a developer limited to the only agent using it: %s", page)
	}
}

// TestRolloutFormKeepsAnOldVariant: a rollout between version 1 and version 102 of an
// agent: the rollout form, which offers the newest 100 versions, still has version 1's
// weight, so that a save does not drop it.
func TestRolloutFormKeepsAnOldVariant(t *testing.T) {
	e := testenv.Start(t)
	id := createAgent(t, e, e.Owner.Token, "Prolific")
	for i := range 102 {
		if res := e.Do(nil, "PUT", "/api/v1/agents/"+id, e.Owner.Token, map[string]any{"prompt_config": map[string]any{"prompt": fmt.Sprintf("Take %d.", i)}}); res.Status != http.StatusOK {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		if res := e.Do(nil, "POST", "/api/v1/agents/"+id+"/publish", e.Owner.Token, nil); res.Status != http.StatusNoContent {
			t.Fatalf("publish: %d %s", res.Status, res.Body)
		}
	}
	ro := e.Do(nil, "PUT", "/api/v1/agents/"+id+"/rollout", e.Owner.Token, map[string]any{"variants": []any{
		map[string]any{"version": 1, "weight": 30}, map[string]any{"version": 102, "weight": 70}}})
	if ro.Status != http.StatusOK {
		t.Fatalf("rollout: %d %s", ro.Status, ro.Body)
	}
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	page := string(e.Do(s.Client, "GET", "/agents/"+id+"/rollout-panel", "", nil).Body)
	for _, want := range []string{`id="w-1" name="weight_1" type="number" min="0" max="100" step="1" value="30"`, `name="weight_102" type="number" min="0" max="100" step="1" value="70"`, `name="weight_3"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the rollout form lacks %s", want)
		}
	}
	if strings.Contains(page, `name="weight_2"`) {
		t.Error("the rollout form offers version 2, past the newest 100 and no variant")
	}
}

// TestAuditNamesActorsPastFiveHundredMembers: with 502 members, the owner (the oldest)
// added the others: the audit log names them as the owner, not as a former member (the
// page read the newest 500 members for names).
func TestAuditNamesActorsPastFiveHundredMembers(t *testing.T) {
	e := testenv.Start(t)
	for i := range 501 {
		addMember(t, e, e.NewUser(fmt.Sprintf("m%03d@example.com", i), false), map[string]any{"role": "member"})
	}
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	page := string(e.Do(s.Client, "GET", "/workspace/audit", "", nil).Body)
	rows := strings.Count(page, "<tr data-event=")
	if rows == 0 || strings.Contains(page, "Former member") {
		t.Errorf("%d events; a current member called former: %v", rows, strings.Contains(page, "Former member"))
	}
}

// TestNumberFormReadsTheAgentsOnce: a number's page and the add form hold two agent
// pickers (inbound, outbound) that show the same first page: one read of the agents
// list serves both.
func TestNumberFormReadsTheAgentsOnce(t *testing.T) {
	e := testenv.Start(t)
	createAgent(t, e, e.Owner.Token, "Desk")
	res := e.Do(nil, "POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550100", "provider": "twilio"})
	if res.Status != http.StatusCreated {
		t.Fatalf("number: %d %s", res.Status, res.Body)
	}
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	for _, page := range []string{"/numbers", "/numbers/" + res.Data()["id"].(string)} {
		before := apiRequests(t, e)["GET /api/v1/agents"]
		if got := e.Do(s.Client, "GET", page, "", nil); got.Status != http.StatusOK || !strings.Contains(selectOf(string(got.Body), "n-out"), ">Desk<") {
			t.Fatalf("%s: %d, outbound picker %q", page, got.Status, selectOf(string(got.Body), "n-out"))
		}
		if n := apiRequests(t, e)["GET /api/v1/agents"] - before; n != 1 {
			t.Errorf("%s read the agents list %d times, want 1", page, n)
		}
	}
}
