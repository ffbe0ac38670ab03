package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// unknownAgentID is well formed but names no agent.
const unknownAgentID = "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ"

// createAgent creates an agent and returns its data, failing unless it is 201.
func (e *env) createAgent(token string, body map[string]any) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/api/v1/agents", token, body)
	expect(e.t, r, 201)
	return r.Data()
}

// agent returns the current data and ETag of an agent.
func (e *env) agent(token, id string) (map[string]any, string) {
	e.t.Helper()
	r := e.do("GET", "/api/v1/agents/"+id, token, nil)
	expect(e.t, r, 200)
	return r.Data(), r.Header.Get("ETag")
}

// publish publishes an agent and fails unless it is 204.
func (e *env) publish(token, id string, body any) {
	e.t.Helper()
	expect(e.t, e.do("POST", "/api/v1/agents/"+id+"/publish", token, body), 204)
}

// addMember adds user to the owner's personal workspace and returns a token of the user
// acting there.
func (e *env) addMember(u *testUser, role string, modules, agentIDs []string) string {
	e.t.Helper()
	body := map[string]any{"id": u.ID, "role": role}
	if modules != nil {
		body["modules"] = modules
	}
	if agentIDs != nil {
		body["agent_ids"] = agentIDs
	}
	expect(e.t, e.do("POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users", e.Owner.Token, body), 201)
	return e.tokenIn(u, e.Owner.WorkspaceID)
}

// path returns the value at a dot path of a decoded JSON tree (nil when absent).
func path(v any, p string) any {
	for seg := range strings.SplitSeq(p, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			var i int
			if _, err := fmt.Sscan(seg, &i); err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

var agentGroups = []string{"call_config", "knowledge_base_config", "llm_config", "prompt_config", "stt_config", "tts_config", "analysis_config"}

func TestAgentCreateDefaults(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(e.Owner.Token, map[string]any{"name": "Support"})
	if id, _ := a["id"].(string); !strings.HasPrefix(id, "agt_") {
		t.Errorf("id %q", a["id"])
	}
	for k, want := range map[string]any{
		"name": "Support", "workspace_id": e.Owner.WorkspaceID, "status": "draft",
		"published_version": nil, "published_at": nil,
		"call_config.max_call_duration_ms":           3600000.0,
		"call_config.ring_duration_ms":               30000.0,
		"knowledge_base_config.chunks_to_retrieve":   3.0,
		"knowledge_base_config.similarity_threshold": nil,
		"llm_config.provider":                        "groq",
		"llm_config.model":                           "llama-3.3-70b-versatile",
		"llm_config.temperature":                     0.5,
		"llm_config.api_key":                         nil,
		"prompt_config.first_speaker":                "ai",
		"prompt_config.welcome_message_type":         "static",
		"prompt_config.ai_speak_after_silence":       false,
		"stt_config.provider":                        "deepgram",
		"stt_config.model":                           "nova-3",
		"tts_config.provider":                        "elevenlabs",
		"tts_config.model":                           "eleven_flash_v2_5",
		"tts_config.streaming_latency":               3.0,
		"tts_config.voice_id":                        "JBFqnCBsd6RMkjVDRZzb",
	} {
		if got := path(a, k); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", k, got, want)
		}
	}
	for _, g := range agentGroups {
		if _, ok := a[g].(map[string]any); !ok {
			t.Errorf("group %s missing: %v", g, a[g])
		}
	}
	if tools, ok := path(a, "llm_config.tools").([]any); !ok || len(tools) != 0 {
		t.Errorf("tools = %#v, want []", path(a, "llm_config.tools"))
	}
	if kbs, ok := path(a, "llm_config.knowledge_base_ids").([]any); !ok || len(kbs) != 0 {
		t.Errorf("knowledge_base_ids = %#v, want []", path(a, "llm_config.knowledge_base_ids"))
	}
	for _, k := range []string{"created_at", "updated_at"} {
		if s, _ := a[k].(string); !strings.HasSuffix(s, "Z") {
			t.Errorf("%s = %v, want RFC 3339 UTC", k, a[k])
		}
	}
	// The defaults are complete: publishable at once.
	e.publish(e.Owner.Token, a["id"].(string), nil)
	got, _ := e.agent(e.Owner.Token, a["id"].(string))
	if got["status"] != "published" {
		t.Errorf("status after publish = %v", got["status"])
	}
	// A show returns what the create returned.
	delete(a, "status")
	delete(a, "published_version")
	delete(a, "published_at")
	delete(a, "updated_at")
	for k, v := range a {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("show %s = %#v, create gave %#v", k, got[k], v)
		}
	}
}

func TestAgentCreateNameRequired(t *testing.T) {
	e := newEnv(t)
	expectFields(t, e.do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{}), "name")
	expectFields(t, e.do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"call_config": map[string]any{"ring_duration_ms": 10000}}), "name")
	expect(t, e.do("POST", "/api/v1/agents", e.Owner.Token, "[1]"), 400)
	expect(t, e.do("POST", "/api/v1/agents", e.Owner.Token, "{"), 400)
	if n := len(e.do("GET", "/api/v1/agents", e.Owner.Token, nil).List()); n != 0 {
		t.Fatalf("%d agents after rejected creates", n)
	}
}

func TestAgentCreateMergesGivenGroups(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(e.Owner.Token, map[string]any{
		"name":        "Rime",
		"call_config": map[string]any{"ring_duration_ms": 10000},
		"tts_config":  map[string]any{"provider": "rime", "model": "arcana", "speaker": "luna", "streaming_latency": 1},
	})
	if path(a, "call_config.ring_duration_ms") != 10000.0 || path(a, "call_config.max_call_duration_ms") != 3600000.0 {
		t.Errorf("call_config not merged into the default: %v", a["call_config"])
	}
	// Another provider replaces the default group: ElevenLabs' voice_id is not dragged along.
	if path(a, "tts_config.voice_id") != nil || path(a, "tts_config.speaker") != "luna" {
		t.Errorf("tts_config = %v", a["tts_config"])
	}
}

func TestAgentListStatusFilter(t *testing.T) {
	e := newEnv(t)
	d1 := e.createAgent(e.Owner.Token, map[string]any{"name": "d1"})["id"].(string)
	p1 := e.createAgent(e.Owner.Token, map[string]any{"name": "p1"})["id"].(string)
	d2 := e.createAgent(e.Owner.Token, map[string]any{"name": "d2"})["id"].(string)
	e.publish(e.Owner.Token, p1, nil)

	for q, want := range map[string][]string{
		"":                  {d2, p1, d1},
		"?status=draft":     {d2, d1},
		"?status=published": {p1},
	} {
		r := e.do("GET", "/api/v1/agents"+q, e.Owner.Token, nil)
		expect(t, r, 200)
		if got := itemIDs(r.List()); !slices.Equal(got, want) {
			t.Errorf("GET /api/v1/agents%s = %v, want %v", q, got, want)
		}
	}
	// A published agent changed goes back to the draft list.
	expect(t, e.do("PUT", "/api/v1/agents/"+p1, e.Owner.Token, map[string]any{"name": "p1 changed"}), 200)
	if got := itemIDs(e.do("GET", "/api/v1/agents?status=draft", e.Owner.Token, nil).List()); !slices.Equal(got, []string{d2, p1, d1}) {
		t.Errorf("drafts after change = %v", got)
	}
	if got := e.do("GET", "/api/v1/agents?status=published", e.Owner.Token, nil).List(); len(got) != 0 {
		t.Errorf("published after change = %v", itemIDs(got))
	}
	for _, bad := range []string{"?status=live", "?status=DRAFT", "?status="} {
		r := e.do("GET", "/api/v1/agents"+bad, e.Owner.Token, nil)
		if bad == "?status=" {
			expect(t, r, 200) // empty means every status
			continue
		}
		expectFields(t, r, "status")
	}
}

func TestAgentListPagination(t *testing.T) {
	e := newEnv(t)
	var all []string
	for i := range 5 {
		all = append([]string{e.createAgent(e.Owner.Token, map[string]any{"name": fmt.Sprint("a", i)})["id"].(string)}, all...)
	}
	var walked []string
	var pages []*response
	next := ""
	for {
		q := "?per_page=2"
		if next != "" {
			q += "&cursor=" + url.QueryEscape(next)
		}
		r := e.do("GET", "/api/v1/agents"+q, e.Owner.Token, nil)
		expect(t, r, 200)
		if r.Meta()["per_page"] != 2.0 {
			t.Fatalf("meta = %v", r.Meta())
		}
		pages = append(pages, r)
		walked = append(walked, itemIDs(r.List())...)
		n, _ := r.Meta()["next_cursor"].(string)
		if n == "" {
			break
		}
		next = n
	}
	if !slices.Equal(walked, all) || len(pages) != 3 {
		t.Fatalf("walk = %v in %d pages, want %v in 3", walked, len(pages), all)
	}
	if pages[0].Meta()["prev_cursor"] != nil {
		t.Errorf("first page prev_cursor = %v", pages[0].Meta()["prev_cursor"])
	}
	prev := pages[1].Meta()["prev_cursor"].(string)
	back := e.do("GET", "/api/v1/agents?per_page=2&cursor="+url.QueryEscape(prev), e.Owner.Token, nil)
	expect(t, back, 200)
	if !slices.Equal(itemIDs(back.List()), itemIDs(pages[0].List())) {
		t.Errorf("prev of page 2 = %v, want %v", itemIDs(back.List()), itemIDs(pages[0].List()))
	}
	expectFields(t, e.do("GET", "/api/v1/agents?per_page=0", e.Owner.Token, nil), "per_page")
	expectFields(t, e.do("GET", "/api/v1/agents?per_page=101", e.Owner.Token, nil), "per_page")
	expectFields(t, e.do("GET", "/api/v1/agents?cursor=bogus", e.Owner.Token, nil), "cursor")
	// A cursor of the status-filtered list is foreign to the unfiltered one.
	r := e.do("GET", "/api/v1/agents?status=draft&per_page=1", e.Owner.Token, nil)
	c := r.Meta()["next_cursor"].(string)
	expectFields(t, e.do("GET", "/api/v1/agents?cursor="+url.QueryEscape(c), e.Owner.Token, nil), "cursor")
}

func TestAgentUpdateMerge(t *testing.T) {
	e := newEnv(t)
	id := e.createAgent(e.Owner.Token, map[string]any{"name": "Merge"})["id"].(string)
	put := func(body any) map[string]any {
		t.Helper()
		r := e.do("PUT", "/api/v1/agents/"+id, e.Owner.Token, body)
		expect(t, r, 200)
		return r.Data()
	}
	// A given group merges field by field.
	a := put(map[string]any{"call_config": map[string]any{"ring_duration_ms": 10000}})
	if path(a, "call_config.ring_duration_ms") != 10000.0 || path(a, "call_config.max_call_duration_ms") != 3600000.0 {
		t.Errorf("call_config = %v", a["call_config"])
	}
	a = put(map[string]any{"knowledge_base_config": map[string]any{"similarity_threshold": 0.5}})
	if path(a, "knowledge_base_config.similarity_threshold") != 0.5 || path(a, "knowledge_base_config.chunks_to_retrieve") != 3.0 {
		t.Errorf("knowledge_base_config = %v", a["knowledge_base_config"])
	}
	// null on a nullable field sets null.
	a = put(map[string]any{"knowledge_base_config": map[string]any{"similarity_threshold": nil}})
	if v, ok := a["knowledge_base_config"].(map[string]any)["similarity_threshold"]; !ok || v != nil {
		t.Errorf("similarity_threshold = %v (present %v), want null", v, ok)
	}
	// Arrays are replaced whole.
	a = put(map[string]any{"llm_config": map[string]any{"tools": []any{
		map[string]any{"name": "end", "type": "end_call"},
		map[string]any{"name": "press", "type": "press_ivr"},
	}}})
	if n := len(path(a, "llm_config.tools").([]any)); n != 2 {
		t.Fatalf("%d tools, want 2", n)
	}
	a = put(map[string]any{"llm_config": map[string]any{"tools": []any{map[string]any{"name": "only", "type": "end_call"}}}})
	if tools := path(a, "llm_config.tools").([]any); len(tools) != 1 || path(a, "llm_config.tools.0.name") != "only" {
		t.Errorf("tools = %v, want the one given", tools)
	}
	if path(a, "llm_config.model") != "llama-3.3-70b-versatile" || path(a, "llm_config.temperature") != 0.5 {
		t.Errorf("llm_config fields not given were not kept: %v", a["llm_config"])
	}
	if path(a, "call_config.ring_duration_ms") != 10000.0 {
		t.Errorf("a group not given changed: %v", a["call_config"])
	}

	// An empty body changes nothing, keeps the published status and the ETag.
	e.publish(e.Owner.Token, id, nil)
	before, etag := e.agent(e.Owner.Token, id)
	for _, body := range []any{map[string]any{}, "", map[string]any{"name": "Merge"}, map[string]any{"call_config": map[string]any{}}} {
		r := e.do("PUT", "/api/v1/agents/"+id, e.Owner.Token, body)
		expect(t, r, 200)
		if !reflect.DeepEqual(r.Data(), before) || r.Header.Get("ETag") != etag {
			t.Errorf("PUT %v changed the agent:\n%v\n%v", body, r.Data(), before)
		}
	}
}

func TestAgentDelete(t *testing.T) {
	e := newEnv(t)
	id := e.createAgent(e.Owner.Token, map[string]any{"name": "Gone"})["id"].(string)
	keep := e.createAgent(e.Owner.Token, map[string]any{"name": "Kept"})["id"].(string)
	e.publish(e.Owner.Token, id, nil)
	e.publish(e.Owner.Token, id, nil)
	r := e.do("DELETE", "/api/v1/agents/"+id, e.Owner.Token, nil)
	expect(t, r, 204)
	if len(r.Body) != 0 {
		t.Errorf("204 with a body: %s", r.Body)
	}
	expect(t, e.do("GET", "/api/v1/agents/"+id, e.Owner.Token, nil), 404)
	expect(t, e.do("DELETE", "/api/v1/agents/"+id, e.Owner.Token, nil), 404)
	expect(t, e.do("GET", "/api/v1/agents/"+id+"/versions", e.Owner.Token, nil), 404)
	if got := itemIDs(e.do("GET", "/api/v1/agents", e.Owner.Token, nil).List()); !slices.Equal(got, []string{keep}) {
		t.Errorf("list after delete = %v", got)
	}
	for _, q := range []string{"?status=published", "?status=draft"} {
		for _, got := range itemIDs(e.do("GET", "/api/v1/agents"+q, e.Owner.Token, nil).List()) {
			if got == id {
				t.Errorf("deleted agent still listed under %s", q)
			}
		}
	}
	// Its versions are gone from storage.
	e.bolt().Bolt().View(func(tx *bbolt.Tx) error {
		c := tx.Bucket([]byte("agent_versions")).Cursor()
		for k, _ := c.Seek([]byte(id)); k != nil && strings.HasPrefix(string(k), id); k, _ = c.Next() {
			t.Errorf("version key %q left after delete", k)
		}
		return nil
	})
}

// agentRoutes are every route of one agent, with a valid body where one is needed.
func agentRoutes(id string) [][3]any {
	return [][3]any{
		{"GET", "/api/v1/agents/" + id, nil},
		{"PUT", "/api/v1/agents/" + id, map[string]any{"name": "x"}},
		{"DELETE", "/api/v1/agents/" + id, nil},
		{"POST", "/api/v1/agents/" + id + "/publish", nil},
		{"GET", "/api/v1/agents/" + id + "/versions", nil},
		{"GET", "/api/v1/agents/" + id + "/versions/1", nil},
		{"POST", "/api/v1/agents/" + id + "/versions/1/restore", nil},
		{"GET", "/api/v1/agents/" + id + "/versions/1/diff/current", nil},
		{"DELETE", "/api/v1/agents/" + id + "/versions/1", nil},
	}
}

func TestAgentUnknownOrForeignIsNotFound(t *testing.T) {
	e := newEnv(t)
	other := e.newUser("other@example.com", false)
	foreign := e.createAgent(other.Token, map[string]any{"name": "Theirs"})["id"].(string)
	e.publish(other.Token, foreign, nil)
	before, etag := e.agent(other.Token, foreign)

	for _, id := range []string{unknownAgentID, "nope", "agt_", foreign, url.PathEscape("agt_../x")} {
		for _, rt := range agentRoutes(id) {
			r := e.do(rt[0].(string), rt[1].(string), e.Owner.Token, rt[2])
			if r.Status != 404 || r.Code() != "not_found" {
				t.Errorf("%s %s: %d %s, want 404", rt[0], rt[1], r.Status, r.Body)
			}
		}
	}
	// The foreign agent is untouched and not listed.
	after, etag2 := e.agent(other.Token, foreign)
	if !reflect.DeepEqual(before, after) || etag != etag2 {
		t.Errorf("foreign agent changed:\n%v\n%v", before, after)
	}
	if l := e.do("GET", "/api/v1/agents", e.Owner.Token, nil).List(); len(l) != 0 {
		t.Errorf("owner lists %v", itemIDs(l))
	}
	// Bad version numbers are not found either.
	id := e.createAgent(e.Owner.Token, map[string]any{"name": "Mine"})["id"].(string)
	e.publish(e.Owner.Token, id, nil)
	for _, p := range []string{"/versions/0", "/versions/-1", "/versions/x", "/versions/2", "/versions/99999999999999999999", "/versions/2/restore", "/versions/1/diff/2", "/versions/2/diff/1", "/versions/2/diff/current", "/versions/1/diff/latest"} {
		method := "GET"
		if strings.HasSuffix(p, "restore") {
			method = "POST"
		}
		r := e.do(method, "/api/v1/agents/"+id+p, e.Owner.Token, nil)
		if r.Status != 404 {
			t.Errorf("%s %s: %d %s, want 404", method, p, r.Status, r.Body)
		}
	}
}

// rawJSON decodes b, for comparisons of whole bodies.
func rawJSON(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}
