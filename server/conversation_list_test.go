package server_test

import (
	"net/url"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// listedIDs returns the ids of a list response's items, failing on an item that carries
// its messages (a list stays small: the show route has them).
func listedIDs(t *testing.T, r *testkit.Response) []string {
	t.Helper()
	testkit.Expect(t, r, 200)
	ids := []string{}
	for _, it := range r.List() {
		m := it.(map[string]any)
		if _, ok := m["messages"]; ok {
			t.Errorf("a listed conversation carries its messages: %v", m)
		}
		ids = append(ids, m["id"].(string))
	}
	return ids
}

func sameIDs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// startOn starts a conversation with agent's draft as the owner and returns its id.
func (e *convEnv) startOn(t *testing.T, agent string) string {
	t.Helper()
	return e.start(t, agent, map[string]any{"version": "draft", "variables": map[string]any{"shop": "A"}}, 201).Data()["id"].(string)
}

// TestConversationList: GET /api/v1/conversations lists the workspace's conversations
// newest first, without their messages, by agent and by status (an end moves one), page
// by page both ways; another workspace's are never listed.
func TestConversationList(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(shopModel)
	a, b := shopAgent(t, e), e.createAgent(t, map[string]any{"name": "Other", "prompt_config": map[string]any{"prompt": "Hi {{shop}}"}})
	a1, b1, a2, b2, a3 := e.startOn(t, a), e.startOn(t, b), e.startOn(t, a), e.startOn(t, b), e.startOn(t, a)
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+a2+"/end", e.tok, nil), 200)
	stranger := e.NewUser("stranger@example.com", false)
	list := func(token, query string) []string {
		return listedIDs(t, e.Do("GET", "/api/v1/conversations?"+query, token, nil))
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{a3, b2, a2, b1, a1}},
		{"agent_id=" + a, []string{a3, a2, a1}},
		{"status=active", []string{a3, b2, b1, a1}},
		{"status=ended", []string{a2}},
		{"agent_id=" + b + "&status=ended", []string{}},
		{"agent_id=agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ", []string{}},
	} {
		if got := list(e.tok, c.query); !sameIDs(got, c.want) {
			t.Errorf("?%s: %v, want %v", c.query, got, c.want)
		}
	}
	// An item is the show route's record without its messages.
	r := e.Do("GET", "/api/v1/conversations?status=ended", e.tok, nil)
	item := r.List()[0].(map[string]any)
	shown := e.Do("GET", "/api/v1/conversations/"+a2, e.tok, nil).Data()
	delete(shown, "messages")
	for k, v := range shown {
		if k != "variables" && k != "usage" && item[k] != v {
			t.Errorf("listed %s = %v, shown %v", k, item[k], v)
		}
	}
	if item["call_id"] == nil || item["status"] != data.ConversationEnded {
		t.Errorf("the ended conversation lists as %v", item)
	}
	// Pages of 2: next_cursor on, then prev_cursor back.
	p1 := e.Do("GET", "/api/v1/conversations?per_page=2", e.tok, nil)
	if got := listedIDs(t, p1); !sameIDs(got, []string{a3, b2}) || p1.Meta()["next_cursor"] == nil || p1.Meta()["prev_cursor"] != nil {
		t.Fatalf("first page: %v %v", got, p1.Meta())
	}
	p2 := e.Do("GET", "/api/v1/conversations?per_page=2&cursor="+url.QueryEscape(p1.Meta()["next_cursor"].(string)), e.tok, nil)
	if got := listedIDs(t, p2); !sameIDs(got, []string{a2, b1}) || p2.Meta()["prev_cursor"] == nil {
		t.Fatalf("second page: %v %v", got, p2.Meta())
	}
	p3 := e.Do("GET", "/api/v1/conversations?per_page=2&cursor="+url.QueryEscape(p2.Meta()["next_cursor"].(string)), e.tok, nil)
	if got := listedIDs(t, p3); !sameIDs(got, []string{a1}) || p3.Meta()["next_cursor"] != nil {
		t.Fatalf("last page: %v %v", got, p3.Meta())
	}
	back := e.Do("GET", "/api/v1/conversations?per_page=2&cursor="+url.QueryEscape(p2.Meta()["prev_cursor"].(string)), e.tok, nil)
	if got := listedIDs(t, back); !sameIDs(got, []string{a3, b2}) {
		t.Errorf("back from the second page: %v", got)
	}
	// A cursor of one filter is refused by another.
	testkit.ExpectFields(t, e.Do("GET", "/api/v1/conversations?status=active&cursor="+url.QueryEscape(p1.Meta()["next_cursor"].(string)), e.tok, nil), "cursor")
	// Another workspace sees none of them.
	if got := list(stranger.Token, ""); len(got) != 0 {
		t.Errorf("another workspace lists %v", got)
	}
	// An agent's delete keeps its conversations (docs/conversations.md, "After the end"):
	// the list shows what the show route shows.
	testkit.Expect(t, e.Do("DELETE", "/api/v1/agents/"+b, e.tok, nil), 204)
	for _, id := range []string{b1, b2} {
		testkit.Expect(t, e.Do("GET", "/api/v1/conversations/"+id, e.tok, nil), 200)
	}
	if got := list(e.tok, "agent_id="+b); !sameIDs(got, []string{b2, b1}) {
		t.Errorf("a deleted agent's conversations, which the show route shows: listed %v", got)
	}
}

// TestConversationListAccess: the list follows the show route's rule: a member or a key
// limited to some agents lists only their conversations (and none of another agent's
// when it asks for it by agent_id); a caller without the conversations gate is 403.
func TestConversationListAccess(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(shopModel)
	a, b := shopAgent(t, e), e.createAgent(t, map[string]any{"name": "Other", "prompt_config": map[string]any{"prompt": "Hi {{shop}}"}})
	a1, b1, a2 := e.startOn(t, a), e.startOn(t, b), e.startOn(t, a)
	ws := e.Owner.WorkspaceID
	limited := e.Member("limited@example.com", ws, data.RoleDeveloper, nil, []string{b})
	noAgents := e.Member("noagents@example.com", ws, data.RoleDeveloper, []string{data.ModuleCallHistory}, nil)
	key := func(body map[string]any) string {
		r := e.Do("POST", "/api/v1/api-keys", e.tok, body)
		testkit.Expect(t, r, 201)
		return r.JSON()["token"].(string)
	}
	limitedKey := key(map[string]any{"name": "narrow", "scopes": []string{data.ScopeConversationsWrite}, "agent_ids": []string{a}})
	for _, c := range []struct {
		who, token, query string
		want              []string
	}{
		{"the owner", e.tok, "", []string{a2, b1, a1}},
		{"a member limited to b", limited.Token, "", []string{b1}},
		{"a member limited to b, asking for a", limited.Token, "agent_id=" + a, []string{}},
		{"a member limited to b, active", limited.Token, "status=active", []string{b1}},
		{"a key limited to a", limitedKey, "", []string{a2, a1}},
		{"a key limited to a, asking for b", limitedKey, "agent_id=" + b, []string{}},
	} {
		if got := listedIDs(t, e.Do("GET", "/api/v1/conversations?"+c.query, c.token, nil)); !sameIDs(got, c.want) {
			t.Errorf("%s ?%s: %v, want %v", c.who, c.query, got, c.want)
		}
	}
	testkit.Expect(t, e.Do("GET", "/api/v1/conversations", noAgents.Token, nil), 403)
	for _, scope := range []string{data.ScopeCallsRuntime, "agents:write"} {
		testkit.Expect(t, e.Do("GET", "/api/v1/conversations", key(map[string]any{"name": scope, "scopes": []string{scope}}), nil), 403)
	}
}

// TestConversationListFilters: each filter and page parameter at its edge and just past
// it; every bad one is named in one 422.
func TestConversationListFilters(t *testing.T) {
	e := newConvEnv(t, nil)
	for _, c := range []struct {
		query  string
		fields []string // nil: 200
	}{
		{"status=active", nil},
		{"status=ended", nil},
		{"status=Active", []string{"status"}},
		{"status=open", []string{"status"}},
		{"status=", []string{"status"}},
		{"agent_id=agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ", nil},
		{"agent_id=", []string{"agent_id"}},
		{"agent_id=conv_01JD6ZZZZZZZZZZZZZZZZZZZZZ", []string{"agent_id"}},
		{"agent_id=agt_1", []string{"agent_id"}},
		{"per_page=1", nil},
		{"per_page=100", nil},
		{"per_page=0", []string{"per_page"}},
		{"per_page=101", []string{"per_page"}},
		{"cursor=abc", []string{"cursor"}},
		{"agent=agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ", []string{"agent"}},
		{"status=x&agent_id=y&per_page=0", []string{"status", "agent_id", "per_page"}},
	} {
		r := e.Do("GET", "/api/v1/conversations?"+c.query, e.tok, nil)
		if c.fields == nil {
			testkit.Expect(t, r, 200)
			continue
		}
		testkit.ExpectFields(t, r, c.fields...)
	}
}
