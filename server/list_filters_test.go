package server_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// listNames returns the value of member field of each item of a list response.
func listNames(r *testkit.Response, field string) []string {
	var out []string
	for _, item := range r.List() {
		out = append(out, item.(map[string]any)[field].(string))
	}
	return out
}

// GET /api/v1/agents?knowledge_base_id= lists the agents using a knowledge base: by their
// configuration or by a published version only; a member limited by agent_ids sees only
// its own among them; a malformed id is a 422 naming the parameter.
func TestAgentListByKnowledgeBase(t *testing.T) {
	s := testkit.NewServer(t, nil)
	kb := s.Do("POST", "/api/v1/knowledge-bases", s.Owner.Token, map[string]any{"name": "Docs"})
	testkit.Expect(t, kb, 201)
	kbID := kb.Data()["id"].(string)
	create := func(name string, kbs []string) string {
		r := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": name, "llm_config": map[string]any{"knowledge_base_ids": kbs}})
		testkit.Expect(t, r, 201)
		return r.Data()["id"].(string)
	}
	attached := create("Attached", []string{kbID})
	create("Without", []string{})
	// Published with the knowledge base, then detached in its draft: its live version
	// still retrieves from it.
	published := create("Published", []string{kbID})
	testkit.Expect(t, s.Do("POST", "/api/v1/agents/"+published+"/publish", s.Owner.Token, map[string]any{}), 204)
	testkit.Expect(t, s.Do("PUT", "/api/v1/agents/"+published, s.Owner.Token, map[string]any{"llm_config": map[string]any{"knowledge_base_ids": []string{}}}), 200)

	path := "/api/v1/agents?knowledge_base_id=" + url.QueryEscape(kbID)
	if got := listNames(s.Do("GET", path, s.Owner.Token, nil), "name"); !slices.Equal(got, []string{"Published", "Attached"}) {
		t.Errorf("the owner's agents using the knowledge base: %v", got)
	}
	first := s.Do("GET", path+"&per_page=1", s.Owner.Token, nil)
	next, _ := first.Meta()["next_cursor"].(string)
	if got := listNames(first, "name"); !slices.Equal(got, []string{"Published"}) || next == "" {
		t.Fatalf("first page %v, next %q", got, next)
	}
	if got := listNames(s.Do("GET", path+"&per_page=1&cursor="+next, s.Owner.Token, nil), "name"); !slices.Equal(got, []string{"Attached"}) {
		t.Errorf("second page %v", got)
	}
	testkit.ExpectFields(t, s.Do("GET", "/api/v1/agents?per_page=1&cursor="+next, s.Owner.Token, nil), "cursor")

	limited := s.Member("limited@example.com", s.Owner.WorkspaceID, data.RoleDeveloper, nil, []string{attached})
	if got := listNames(s.Do("GET", path, limited.Token, nil), "name"); !slices.Equal(got, []string{"Attached"}) {
		t.Errorf("a member limited to Attached sees %v", got)
	}
	testkit.ExpectFields(t, s.Do("GET", "/api/v1/agents?knowledge_base_id=agt_x", s.Owner.Token, nil), "knowledge_base_id")
}

// GET /api/v1/numbers?q= finds numbers by nickname or by the digits of their phone number
// however they are typed, and refuses a search longer than a nickname.
func TestNumberSearch(t *testing.T) {
	s := testkit.NewServer(t, nil)
	for _, n := range [][2]string{{"+14155550123", "Front desk"}, {"+442079460000", "London 415"}, {"+33142000000", "Paris"}} {
		testkit.Expect(t, s.Do("POST", "/api/v1/numbers", s.Owner.Token, map[string]any{"phone_number": n[0], "nickname": n[1], "provider": "sip"}), 201)
	}
	agent := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Some agent"})
	testkit.Expect(t, agent, 201)
	limited := s.Member("limited@example.com", s.Owner.WorkspaceID, data.RoleDeveloper, nil, []string{agent.Data()["id"].(string)})
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"FRONT", []string{"Front desk"}},
		{"+1 (415) 555-01", []string{"Front desk"}},
		{"415", []string{"London 415", "Front desk"}},
		{"+33 1 42", []string{"Paris"}},
		{"nobody", nil},
	} {
		path := "/api/v1/numbers?q=" + url.QueryEscape(c.q)
		if got := listNames(s.Do("GET", path, s.Owner.Token, nil), "nickname"); !slices.Equal(got, c.want) {
			t.Errorf("q=%q: %v, want %v", c.q, got, c.want)
		}
		// Numbers belong to no agent: a member limited by agent_ids finds the same.
		if got := listNames(s.Do("GET", path, limited.Token, nil), "nickname"); !slices.Equal(got, c.want) {
			t.Errorf("q=%q as a limited member: %v, want %v", c.q, got, c.want)
		}
	}
	testkit.ExpectFields(t, s.Do("GET", "/api/v1/numbers?q="+strings.Repeat("n", 256), s.Owner.Token, nil), "q")
	testkit.Expect(t, s.Do("GET", "/api/v1/numbers?q="+strings.Repeat("n", 255), s.Owner.Token, nil), 200)
}
