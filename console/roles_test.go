package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/data"
)

// addMember adds u to the owner's workspace through the API.
func addMember(t *testing.T, e *testenv.Env, u *testenv.User, body map[string]any) {
	t.Helper()
	body["id"] = u.ID
	if res := e.Do(nil, "POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users", e.Owner.Token, body); res.Status != http.StatusCreated {
		t.Fatalf("add member: %d %s", res.Status, res.Body)
	}
}

// TestReadOnlyMemberIsNotOfferedWrites: a member (below developer) of the agents module is
// offered no create form and no save button, and the server still refuses both.
func TestReadOnlyMemberIsNotOfferedWrites(t *testing.T) {
	e := testenv.Start(t)
	id := createAgent(t, e, e.Owner.Token, "Shared")
	dan := e.NewUser("dan@example.com", false)
	addMember(t, e, dan, map[string]any{"role": "member", "modules": []string{"agents"}})
	s := e.SignIn(dan, e.Owner.WorkspaceID)
	list := string(e.Do(s.Client, "GET", "/agents", "", nil).Body)
	if !strings.Contains(list, "Shared") || strings.Contains(list, "Create agent") {
		t.Errorf("a read-only member's agent list: shows the agent %v, offers create %v", strings.Contains(list, "Shared"), strings.Contains(list, "Create agent"))
	}
	editor := string(e.Do(s.Client, "GET", "/agents/"+id, "", nil).Body)
	if strings.Contains(editor, "Save draft") || strings.Contains(editor, "Publish the draft") {
		t.Errorf("a read-only member is offered saving")
	}
	versions := string(e.Do(s.Client, "GET", "/agents/"+id+"/versions", "", nil).Body)
	if strings.Contains(versions, "Publish the draft") {
		t.Errorf("a read-only member is offered publishing")
	}
	// Not offered, and still refused.
	csrf := e.CSRF(s)
	if res := e.Do(s.Client, "POST", "/agents", "", url.Values{"csrf_token": {csrf}, "name": {"Mine"}}); res.Status != http.StatusForbidden {
		t.Errorf("create through the console: %d", res.Status)
	}
	if res := e.Do(s.Client, "PUT", "/api/v1/agents/"+id, "", map[string]any{"name": "Mine"}, "X-CSRF-Token", csrf); res.Status != http.StatusForbidden {
		t.Errorf("save through the API with the cookie: %d", res.Status)
	}
	// Sections of modules not held are neither offered nor served.
	if strings.Contains(list, `href="/numbers"`) || strings.Contains(list, `href="/webhooks"`) {
		t.Errorf("a member of agents only is offered other sections")
	}
	if res := e.Do(s.Client, "GET", "/numbers", "", nil); res.Status != http.StatusForbidden {
		t.Errorf("the numbers page for a member without the module: %d", res.Status)
	}
}

// TestMemberLimitedToTwoAgentsSeesTwo: agent_ids restrict the console's list as the API's.
func TestMemberLimitedToTwoAgentsSeesTwo(t *testing.T) {
	e := testenv.Start(t)
	a := createAgent(t, e, e.Owner.Token, "Alpha")
	b := createAgent(t, e, e.Owner.Token, "Bravo")
	c := createAgent(t, e, e.Owner.Token, "Charlie")
	eve := e.NewUser("eve@example.com", false)
	addMember(t, e, eve, map[string]any{"role": "developer", "modules": []string{"agents"}, "agent_ids": []string{a, b}})
	s := e.SignIn(eve, e.Owner.WorkspaceID)
	list := string(e.Do(s.Client, "GET", "/agents", "", nil).Body)
	if !strings.Contains(list, a) || !strings.Contains(list, b) || strings.Contains(list, c) {
		t.Errorf("the list shows %v %v %v, want Alpha and Bravo only", strings.Contains(list, a), strings.Contains(list, b), strings.Contains(list, c))
	}
	if res := e.Do(s.Client, "GET", "/agents/"+c, "", nil); res.Status != http.StatusNotFound {
		t.Errorf("an agent outside agent_ids: %d", res.Status)
	}
}

// TestWorkspaceSwitch: a member of two workspaces switches with their password; the old
// session's token is revoked.
func TestWorkspaceSwitch(t *testing.T) {
	e := testenv.Start(t)
	res := e.Do(nil, "POST", "/api/v1/workspaces", e.Owner.Token, map[string]any{"name": "Second"})
	if res.Status != http.StatusCreated {
		t.Fatalf("create workspace: %d %s", res.Status, res.Body)
	}
	second := res.Data()["id"].(string)
	s := e.SignIn(e.Owner, "")
	page := string(e.Do(s.Client, "GET", "/workspace", "", nil).Body)
	if !strings.Contains(page, `value="`+second+`"`) {
		t.Fatalf("the switcher does not offer the second workspace")
	}
	old := s.Cookies[0].Value
	sw := e.Do(s.Client, "POST", "/workspace/switch", "", url.Values{"csrf_token": {e.CSRF(s)}, "workspace_id": {second}, "password": {e.Owner.Password}})
	if sw.Status != http.StatusSeeOther {
		t.Fatalf("switch: %d %s", sw.Status, sw.Body)
	}
	me := e.Do(s.Client, "GET", "/api/v1/user", "", nil).Data()
	if me["current_workspace_id"] != second {
		t.Errorf("after the switch the session acts in %v", me["current_workspace_id"])
	}
	if r := e.Do(nil, "GET", "/api/v1/user", old, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("the old session's token after a switch: %d", r.Status)
	}
	// A wrong password switches nothing.
	bad := e.Do(s.Client, "POST", "/workspace/switch", "", url.Values{"csrf_token": {e.CSRF(s)}, "workspace_id": {e.Owner.WorkspaceID}, "password": {"wrong"}})
	if bad.Status != http.StatusUnprocessableEntity {
		t.Errorf("switch with a wrong password: %d", bad.Status)
	}
	if me := e.Do(s.Client, "GET", "/api/v1/user", "", nil).Data(); me["current_workspace_id"] != second {
		t.Errorf("a failed switch moved the session to %v", me["current_workspace_id"])
	}
}

// TestAgentDelete: the editor's delete leads to a confirmation that names the agent, whose
// form goes through the API; a refused CSRF deletes nothing.
func TestAgentDelete(t *testing.T) {
	e := testenv.Start(t)
	id := createAgent(t, e, e.Owner.Token, "Doomed")
	s := e.SignIn(e.Owner, "")
	if !strings.Contains(string(e.Do(s.Client, "GET", "/agents/"+id, "", nil).Body), `href="/agents/`+id+`/delete"`) {
		t.Fatalf("the editor offers no delete")
	}
	confirm := string(e.Do(s.Client, "GET", "/agents/"+id+"/delete", "", nil).Body)
	if !strings.Contains(confirm, "Delete the agent Doomed?") || !strings.Contains(confirm, `action="/agents/`+id+`/delete"`) {
		t.Fatalf("the confirmation does not name the agent or offers no form:\n%s", confirm)
	}
	if res := e.Do(s.Client, "POST", "/agents/"+id+"/delete", "", url.Values{}); res.Status != http.StatusForbidden {
		t.Errorf("delete without csrf_token: %d", res.Status)
	}
	if res := e.Do(s.Client, "POST", "/agents/"+id+"/delete", "", url.Values{"csrf_token": {e.CSRF(s)}}); res.Status != http.StatusSeeOther {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	if res := e.Do(nil, "GET", "/api/v1/agents/"+id, e.Owner.Token, nil); res.Status != http.StatusNotFound {
		t.Errorf("the deleted agent: %d", res.Status)
	}
}

// TestUsageBars: a limited subscription shows each limit's use as a bar, the calls open
// now against concurrent_calls and the open conversations against open_conversations
// among them.
func TestUsageBars(t *testing.T) {
	e := testenv.Start(t)
	// The operator's command sets plans (no API route does), through the service layer.
	limits := map[string]int64{"agents": 4, data.LimitConcurrentCalls: 2, data.LimitOpenConversations: 5}
	if _, err := cli.NewServices(e.DB).Subscriptions.SetSubscription(context.Background(), e.Owner.WorkspaceID, data.SubscriptionSet{Limits: limits}); err != nil {
		t.Fatal(err)
	}
	id := createAgent(t, e, e.Owner.Token, "One")
	if res := e.Do(nil, "POST", "/api/v1/calls", e.Owner.Token, map[string]any{"agent_id": id, "direction": "web"}); res.Status != http.StatusCreated {
		t.Fatalf("register a call: %d %s", res.Status, res.Body)
	}
	s := e.SignIn(e.Owner, "")
	page := string(e.Do(s.Client, "GET", "/workspace", "", nil).Body)
	if !strings.Contains(page, `<progress max="100" value="25" aria-label="Agents: 1 of 4">`) {
		t.Errorf("no usage bar for 1 of 4 agents in:\n%s", page)
	}
	if !strings.Contains(page, `<progress max="100" value="50" aria-label="Concurrent calls (open now): 1 of 2">`) {
		t.Errorf("no usage bar for 1 of 2 concurrent calls in:\n%s", page)
	}
	if !strings.Contains(page, `<progress max="100" value="0" aria-label="Open conversations (now): 0 of 5">`) {
		t.Errorf("no usage bar for 0 of 5 open conversations in:\n%s", page)
	}
}

// TestUsageBarsOfALimitedMemberAreTheWorkspaces: a developer limited to agent A reads the
// workspace page's usage as the API answers it, over the whole workspace (A and B: 2 of
// 4 agents), and the page says so, naming neither agent's name beyond their own.
func TestUsageBarsOfALimitedMemberAreTheWorkspaces(t *testing.T) {
	e := testenv.Start(t)
	if _, err := cli.NewServices(e.DB).Subscriptions.SetSubscription(context.Background(), e.Owner.WorkspaceID, data.SubscriptionSet{Limits: map[string]int64{"agents": 4}}); err != nil {
		t.Fatal(err)
	}
	mine := createAgent(t, e, e.Owner.Token, "Alpha line")
	createAgent(t, e, e.Owner.Token, "Bravo line")
	dev := e.NewUser("limited@example.com", false)
	addMember(t, e, dev, map[string]any{"role": "developer", "agent_ids": []string{mine}})
	s := e.SignIn(dev, e.Owner.WorkspaceID)
	page := string(e.Do(s.Client, "GET", "/workspace", "", nil).Body)
	if !strings.Contains(page, `aria-label="Agents: 2 of 4"`) {
		t.Errorf("the limited developer's usage does not count the workspace's 2 agents:\n%s", page)
	}
	if !strings.Contains(page, "Usage of the workspace") || !strings.Contains(page, "Counted over the whole workspace, whatever your role, modules or agents let you see") {
		t.Errorf("the usage does not say it counts the whole workspace:\n%s", page)
	}
	if strings.Contains(page, "Bravo line") {
		t.Error("the workspace page names the hidden agent")
	}
}

// The audit page shows the chain's verification as the API recomputes it, when asked.
func TestAuditPageShowsTheChainVerification(t *testing.T) {
	e := testenv.Start(t)
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	page := string(e.Do(s.Client, "GET", "/workspace/audit?verify=1", "", nil).Body)
	if !strings.Contains(page, "every link intact") {
		t.Fatalf("the audit page shows no verification:\n%s", page)
	}
}

// The agents list searches by name through the API's filter.
func TestAgentsListSearchesByName(t *testing.T) {
	e := testenv.Start(t)
	for _, name := range []string{"Front desk", "Night shift"} {
		if res := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": name}); res.Status != http.StatusCreated {
			t.Fatalf("create %s: %d", name, res.Status)
		}
	}
	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	page := string(e.Do(s.Client, "GET", "/agents?name=front", "", nil).Body)
	if !strings.Contains(page, "Front desk") || strings.Contains(page, "Night shift") || !strings.Contains(page, `name="name"`) {
		t.Fatalf("search by name:\n%s", page)
	}
}

// TestListEmptyStatesFitTheRole: each list page's empty state tells a writer how to add
// the first one, and a reader (member role) that they appear once someone may add them,
// never to create or upload what the page does not offer them.
func TestListEmptyStatesFitTheRole(t *testing.T) {
	e := testenv.Start(t)
	rita := e.NewUser("rita@example.com", false)
	addMember(t, e, rita, map[string]any{"role": data.RoleMember, "modules": []string{data.ModuleAgents,
		data.ModuleKnowledgeBase, data.ModulePhoneNumbers, data.ModuleCallHistory}})
	owner, reader := e.SignIn(e.Owner, e.Owner.WorkspaceID), e.SignIn(rita, e.Owner.WorkspaceID)
	for _, c := range []struct{ path, writer string }{
		{"/agents", "Create one above"},
		{"/knowledge-bases", "Create one above"},
		{"/campaigns", "Upload a CSV"},
		{"/numbers", "Add the phone numbers"},
		{"/suppressions", "Add the numbers"},
	} {
		if page := string(e.Do(owner.Client, "GET", c.path, "", nil).Body); !strings.Contains(page, c.writer) {
			t.Errorf("%s: the owner's empty state does not say %q", c.path, c.writer)
		}
		page := string(e.Do(reader.Client, "GET", c.path, "", nil).Body)
		if strings.Contains(page, c.writer) || !strings.Contains(page, "Your role lets you") {
			t.Errorf("%s: the reader's empty state offers what it cannot do (%q) or does not say why the list is empty", c.path, c.writer)
		}
	}
}
