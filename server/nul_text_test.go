package server_test

import (
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// A text holding U+0000 is refused alike on both engines, naming its field, and stores
// nothing: PostgreSQL's text and jsonb cannot hold the character, so it was a 500 there
// while bbolt kept it (found by FuzzWorkspaceImport on PostgreSQL).
func TestTextHoldingNULIsRefusedOnEveryEngine(t *testing.T) {
	s := testkit.NewServer(t, nil)
	tok := s.Owner.Token
	testkit.ExpectFields(t, s.Do("POST", "/api/v1/agents", tok, `{"name":"Support\u0000"}`), "name")
	testkit.ExpectFields(t, s.Do("POST", "/api/v1/agents", tok,
		`{"name":"Support","prompt_config":{"prompt":"ok","default_variables":{"city":"\u0000"}}}`), "prompt_config.default_variables.city")
	testkit.ExpectFields(t, s.Do("POST", "/api/v1/knowledge-bases", tok,
		`{"name":"Prices","texts":[{"title":"Rates","content":"a\u0000b"}]}`), "texts.0.content")
	if l := s.Do("GET", "/api/v1/agents", tok, nil).List(); len(l) != 0 {
		t.Fatalf("a refused create stored %d agents", len(l))
	}

	a := s.Do("POST", "/api/v1/agents", tok, map[string]any{"name": "Support"})
	testkit.Expect(t, a, 201)
	exp := s.Do("GET", "/api/v1/workspaces/"+s.Owner.WorkspaceID+"/export", tok, nil)
	testkit.Expect(t, exp, 200)
	var doc map[string]any
	if err := json.Unmarshal(exp.Body, &doc); err != nil {
		t.Fatal(err)
	}
	doc["agents"].([]any)[0].(map[string]any)["name"] = "Sup\x00port" // encoding/json writes \u0000
	ws := s.Do("POST", "/api/v1/workspaces", tok, map[string]any{"name": "Copy"})
	testkit.Expect(t, ws, 201)
	target := ws.Data()["id"].(string)
	imp := s.Do("POST", "/api/v1/workspaces/"+target+"/import", s.TokenIn(s.Owner, target), doc)
	testkit.ExpectFields(t, imp, "agents.0.name")
	if l := s.Do("GET", "/api/v1/agents", s.TokenIn(s.Owner, target), nil).List(); len(l) != 0 {
		t.Fatalf("a refused import stored %d agents", len(l))
	}
	// An escaped backslash before "u0000" is text, and is kept as written.
	ok := s.Do("POST", "/api/v1/agents", tok, `{"name":"C:\\u0000"}`)
	testkit.Expect(t, ok, 201)
	if got := ok.Data()["name"]; got != `C:\u0000` {
		t.Fatalf("name %q", got)
	}
}

// The same holds for a query parameter, and for an id in a path.
func TestQueryOrPathHoldingNULIsRefusedOnEveryEngine(t *testing.T) {
	s := testkit.NewServer(t, nil)
	tok := s.Owner.Token
	testkit.ExpectFields(t, s.Do("GET", "/api/v1/agents?name=a%00", tok, nil), "name")
	testkit.ExpectFields(t, s.Do("GET", "/api/v1/calls?q=%00", tok, nil), "q")
	testkit.Expect(t, s.Do("GET", "/api/v1/agents/agt_%00", tok, nil), 404)
	testkit.Expect(t, s.Do("GET", "/api/v1/knowledge-bases/kb_%00", tok, nil), 404)
	testkit.Expect(t, s.Do("GET", "/api/v1/calls/call_%00", tok, nil), 404)
	testkit.Expect(t, s.Do("GET", "/api/v1/jobs/job_%00", tok, nil), 404)
}

// A multipart text part and a CSV line holding U+0000 are refused naming the part or the
// line, and store nothing.
func TestUploadHoldingNULIsRefusedOnEveryEngine(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	kb := e.do("POST", "/api/v1/knowledge-bases", tok, map[string]any{"name": "K"})
	expect(t, kb, 201)
	id := kb.Data()["id"].(string)
	testkit.ExpectFields(t, e.addParts(tok, id, part{"texts", "", []byte("a\x00b")}), "texts.0.content")
	if got := e.do("GET", "/api/v1/knowledge-bases/"+id, tok, nil).Data()["texts"].([]any); len(got) != 0 {
		t.Fatalf("a refused upload stored %v", got)
	}
	testkit.ExpectFields(t, e.do("POST", "/api/v1/suppressions/import", tok, "phone_number,reason\n+14155550101,a\x00b\n", "Content-Type", "text/csv"),
		"rows.line_2")
	if got := e.do("GET", "/api/v1/suppressions", tok, nil).List(); len(got) != 0 {
		t.Fatalf("a refused import stored %v", got)
	}
	body, ct := multipartBody(t, part{name: "campaign", content: []byte(`{"name":"x"}`)},
		part{name: "file", filename: "r.csv", content: []byte("phone_number,city\n+14155550101,a\x00b\n")})
	// The settings' own faults are told with the file's (a campaign part of a name only).
	testkit.ExpectFields(t, e.do("POST", "/api/v1/campaigns", tok, body, "Content-Type", ct),
		"recipients.line_2", "agent_id", "number_id", "window", "max_concurrent")
}

// An id in a path whose bytes are not UTF-8 names no record either: 404 on every route,
// as on bbolt. On PostgreSQL, which cannot compare such text, GET /agents/{id} was a 500
// and left the id among the agents whose revisions every shared statement reads, so
// every authenticated request of the replica failed after it; other routes were a 422
// about a NUL character in a body they never had.
func TestPathNotUTF8IsNotFoundOnEveryEngine(t *testing.T) {
	s := testkit.NewServer(t, nil)
	tok := s.Owner.Token
	testkit.Expect(t, s.Do("POST", "/api/v1/agents", tok, map[string]any{"name": "Support"}), 201)
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/agents/agt_%ff"},
		{"GET", "/api/v1/agents/%ff"},
		{"GET", "/api/v1/agents/%ff/versions"},
		{"DELETE", "/api/v1/agents/%ff"},
		{"GET", "/api/v1/calls/%ff"},
		{"GET", "/api/v1/conversations/%ff"},
		{"GET", "/api/v1/numbers/%ff"},
		{"GET", "/api/v1/users/%ff"},
		{"GET", "/api/v1/workspaces/%ff"},
		{"GET", "/api/v1/workspaces/%00"},
		{"GET", "/api/v1/workspaces/%ff/members"},
		{"GET", "/api/v1/knowledge-bases/%ff"},
	} {
		testkit.Expect(t, s.Do(c.method, c.path, tok, nil), 404)
		if l := s.Do("GET", "/api/v1/agents", tok, nil); l.Status != 200 {
			t.Fatalf("after %s %s, GET /api/v1/agents answered %d %s", c.method, c.path, l.Status, l.Body)
		}
	}
}
