package server_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/validate"
)

// searchEnv is a call environment on a testkit server, whose Member makes limited users.
type searchEnv struct {
	*callEnv
	srv *testkit.Server
}

func newSearchEnv(t *testing.T) *searchEnv {
	s := testkit.NewServer(t, nil)
	e := &env{t: t, DB: s.Store, Bolt: s.DB, URL: s.URL, Owner: s.Owner, Logs: s.Logs, Dir: s.Dir}
	ws := s.Owner.WorkspaceID
	return &searchEnv{callEnv: &callEnv{env: e, ws: ws, agentA: e.newAgent(ws, intp(1)), agentB: e.newAgent(ws, nil)}, srv: s}
}

func said(lines ...string) []map[string]any {
	out := make([]map[string]any, len(lines))
	for i, l := range lines {
		role := "user"
		if i%2 == 0 {
			role = "agent"
		}
		out[i] = map[string]any{"role": role, "content": l, "start_ms": i * 1000}
	}
	return out
}

func searchPath(q string, extra ...string) string {
	v := url.Values{"q": {q}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return "/api/v1/calls?" + v.Encode()
}

func TestCallSearch(t *testing.T) {
	c := newSearchEnv(t)
	c1 := c.register(t, map[string]any{"transcript": said("Hello, how can I help?", "I want to CANCEL my subscription, please.")})
	c2 := c.register(t, map[string]any{"agent_id": c.agentB, "status": "ended",
		"transcript": said("Good morning.", "Cancel, cancel, cancel the order!")})
	c3 := c.register(t, map[string]any{"transcript": said("Your order ships Friday."),
		"analysis": map[string]any{"summary": "Caller asked about the Zürich office"}, "variables": map[string]any{"ticket": 48213}})
	ids := func(r *response) []string { return itemIDs(r.List()) }
	for _, tc := range []struct {
		path string
		want []string
	}{
		{searchPath("cancel"), []string{str(c2, "id"), str(c1, "id")}},
		{searchPath("Cancel  SUBSCRIPTION"), []string{str(c1, "id")}},
		{searchPath("cancel zebra"), nil},
		{searchPath("order"), []string{str(c3, "id"), str(c2, "id")}},
		{searchPath("zürich"), []string{str(c3, "id")}},
		{searchPath("48213"), []string{str(c3, "id")}},
		{searchPath("cancel", "status", "ended"), []string{str(c2, "id")}},
		{searchPath("cancel", "agent_id", c.agentA), []string{str(c1, "id")}},
		{searchPath("cancel", "sort", "relevance"), []string{str(c2, "id"), str(c1, "id")}},
		{searchPath("cancel", "sort", "created_at", "per_page", "1"), []string{str(c2, "id")}},
	} {
		r := c.do("GET", tc.path, c.Owner.Token, nil)
		expect(t, r, 200)
		if got := ids(r); !slices.Equal(got, tc.want) && !(len(got) == 0 && tc.want == nil) {
			t.Errorf("%s: %v, want %v", tc.path, got, tc.want)
		}
	}

	// A hit's snippet marks the matched words exactly.
	r := c.do("GET", searchPath("cancel subscription"), c.Owner.Token, nil)
	expect(t, r, 200)
	hit := r.List()[0].(map[string]any)
	s := hit["search"].(map[string]any)
	if s["field"] != "transcript[1].content" || s["snippet"] != "I want to CANCEL my subscription, please." {
		t.Fatalf("search = %v", s)
	}
	var marked []string
	runes := []rune(s["snippet"].(string))
	for _, h := range s["highlights"].([]any) {
		span := h.(map[string]any)
		marked = append(marked, string(runes[int(span["start"].(float64)):int(span["end"].(float64))]))
	}
	if !slices.Equal(marked, []string{"CANCEL", "subscription"}) || !(s["score"].(float64) > 0) {
		t.Errorf("highlights mark %v, score %v", marked, s["score"])
	}
	r = c.do("GET", searchPath("zürich office"), c.Owner.Token, nil)
	if s := r.List()[0].(map[string]any)["search"].(map[string]any); s["field"] != "analysis.summary" {
		t.Errorf("a match in analysis: %v", s)
	}
	// A plain list has no search member.
	r = c.do("GET", "/api/v1/calls", c.Owner.Token, nil)
	if _, ok := r.List()[0].(map[string]any)["search"]; ok {
		t.Errorf("a list without q carries search: %v", r.List()[0])
	}

	// The index follows updates and deletes, in the same transaction as the call.
	expect(t, c.do("PUT", "/api/v1/calls/"+str(c1, "id"), c.Owner.Token, map[string]any{"transcript": said("All good, goodbye.")}), 200)
	expect(t, c.do("DELETE", "/api/v1/calls/"+str(c2, "id"), c.Owner.Token, nil), 204)
	r = c.do("GET", searchPath("cancel"), c.Owner.Token, nil)
	if got := ids(r); len(got) != 0 {
		t.Errorf("cancel after the update and the delete: %v", got)
	}
	r = c.do("GET", searchPath("goodbye"), c.Owner.Token, nil)
	if got := ids(r); !slices.Equal(got, []string{str(c1, "id")}) {
		t.Errorf("goodbye after the update: %v", got)
	}
}

func TestCallSearchAccess(t *testing.T) {
	c := newSearchEnv(t)
	a := c.register(t, map[string]any{"transcript": said("cancel it")})
	c.register(t, map[string]any{"agent_id": c.agentB, "transcript": said("cancel that")})
	limited := c.srv.Member("limited@example.com", c.ws, data.RoleMember, []string{data.ModuleCallHistory}, []string{c.agentA})
	r := c.do("GET", searchPath("cancel"), limited.Token, nil)
	expect(t, r, 200)
	if got := itemIDs(r.List()); !slices.Equal(got, []string{str(a, "id")}) {
		t.Errorf("a member limited to agent A finds %v", got)
	}
	r = c.do("GET", searchPath("cancel", "agent_id", c.agentB), limited.Token, nil)
	if got := itemIDs(r.List()); len(got) != 0 {
		t.Errorf("a member limited to agent A finds agent B's calls: %v", got)
	}
	noModule := c.srv.Member("nomodule@example.com", c.ws, data.RoleMember, []string{data.ModuleAgents}, nil)
	expect(t, c.do("GET", searchPath("cancel"), noModule.Token, nil), 403)
	expect(t, c.do("GET", "/api/v1/calls/export?q=cancel", noModule.Token, nil), 403)
}

func TestCallSearchBadInput(t *testing.T) {
	c := newSearchEnv(t)
	c.register(t, map[string]any{"transcript": said("one two three four five six seven eight nine")})
	words := func(n int) string {
		w := strings.Fields("one two three four five six seven eight nine")
		return strings.Join(w[:n], " ")
	}
	r := c.do("GET", searchPath("one", "sort", "created_at", "per_page", "1"), c.Owner.Token, nil)
	expect(t, r, 200)
	createdCursor := str(r.Meta(), "next_cursor")
	for _, tc := range []struct {
		name   string
		query  string
		fields []string // nil: 200
	}{
		{"empty q", "q=", []string{"q"}},
		{"no word in q", "q=" + url.QueryEscape("?! …"), []string{"q"}},
		{"q at its bound", "q=" + strings.Repeat("a", validate.MaxSearchQueryLen), nil},
		{"q past its bound", "q=" + strings.Repeat("a", validate.MaxSearchQueryLen+1), []string{"q"}},
		{"q of 10,000 characters", "q=" + url.QueryEscape(strings.Repeat("cancel ", 10000/7+1)[:10000]), []string{"q"}},
		{"terms at their bound", "q=" + url.QueryEscape(words(validate.MaxSearchTerms)), nil},
		{"terms past their bound", "q=" + url.QueryEscape(words(validate.MaxSearchTerms+1)), []string{"q"}},
		{"repeated words count once", "q=" + url.QueryEscape(strings.Repeat("one ", 20)), nil},
		{"sort unknown", "q=one&sort=best", []string{"sort"}},
		{"sort relevance without q", "sort=relevance", []string{"sort"}},
		{"sort created_at without q", "sort=created_at", nil},
		{"sort relevance", "q=one&sort=relevance", nil},
		{"every fault at once", "q=&sort=best&status=gone&per_page=0", []string{"q", "sort", "status", "per_page"}},
		{"a created_at cursor under relevance", "q=one&sort=relevance&cursor=" + createdCursor, []string{"cursor"}},
		{"a cursor under another q", "q=two&cursor=" + createdCursor, []string{"cursor"}},
		{"a search cursor in the plain list", "cursor=" + createdCursor, []string{"cursor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do("GET", "/api/v1/calls?"+tc.query, c.Owner.Token, nil)
			if tc.fields == nil {
				expect(t, r, 200)
				return
			}
			expectFields(t, r, tc.fields...)
		})
	}
}
