package server_test

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// snapshotOf is the part of an agent record that a version snapshots.
func snapshotOf(a map[string]any) map[string]any {
	s := map[string]any{"name": a["name"]}
	for _, g := range agentGroups {
		s[g] = a[g]
	}
	return s
}

func TestAgentStateMachine(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	a := e.createAgent(tok, map[string]any{"name": "States"})
	id := a["id"].(string)
	if a["status"] != "draft" || a["published_version"] != nil || a["published_at"] != nil {
		t.Fatalf("created: status %v, published_version %v, published_at %v", a["status"], a["published_version"], a["published_at"])
	}

	a1, v1 := publishFirstVersion(t, e, id)
	checkUpdatesThenSecondPublish(t, e, id, a1)
	checkRestoreOfFirstVersion(t, e, id, v1)
	checkVersionNumbersNeverReused(t, e, id)
}

// publishFirstVersion publishes agent id: 204, published, version 1. It returns the
// agent and its version 1.
func publishFirstVersion(t *testing.T, e *env, id string) (a1, v1 map[string]any) {
	t.Helper()
	tok := e.Owner.Token
	r := e.do("POST", "/api/v1/agents/"+id+"/publish", tok, map[string]any{"description": "First cut"})
	expect(t, r, 204)
	if len(r.Body) != 0 {
		t.Errorf("publish body: %s", r.Body)
	}
	a1, _ = e.agent(tok, id)
	if a1["status"] != "published" || a1["published_version"] != 1.0 {
		t.Fatalf("after publish: status %v, published_version %v", a1["status"], a1["published_version"])
	}
	if s, _ := a1["published_at"].(string); !strings.HasSuffix(s, "Z") {
		t.Errorf("published_at = %v", a1["published_at"])
	}
	r = e.do("GET", "/api/v1/agents/"+id+"/versions/1", tok, nil)
	expect(t, r, 200)
	v1 = r.Data()
	if v1["version_number"] != 1.0 || v1["description"] != "First cut" || v1["published_by"] != e.Owner.ID || v1["agent_id"] != id {
		t.Errorf("version 1 = %v", v1)
	}
	if s, _ := v1["created_at"].(string); !strings.HasSuffix(s, "Z") {
		t.Errorf("version created_at = %v", v1["created_at"])
	}
	if !reflect.DeepEqual(snapshotOf(v1), snapshotOf(a1)) {
		t.Errorf("version 1 snapshot differs from the agent:\n%v\n%v", snapshotOf(v1), snapshotOf(a1))
	}
	return a1, v1
}

// checkUpdatesThenSecondPublish checks an update that changes nothing keeps the agent
// published, one that changes something makes it a draft (published_version staying 1),
// and a publish without a body makes version 2, description null.
func checkUpdatesThenSecondPublish(t *testing.T, e *env, id string, a1 map[string]any) {
	t.Helper()
	tok := e.Owner.Token
	r := e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"name": "States", "call_config": a1["call_config"]})
	expect(t, r, 200)
	if r.Data()["status"] != "published" {
		t.Errorf("no-op update: status %v", r.Data()["status"])
	}
	// An update that changes something → draft; published_version stays 1.
	r = e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"llm_config": map[string]any{"temperature": 0.9}})
	expect(t, r, 200)
	if d := r.Data(); d["status"] != "draft" || d["published_version"] != 1.0 || d["published_at"] != a1["published_at"] {
		t.Errorf("changed: status %v, published_version %v, published_at %v", d["status"], d["published_version"], d["published_at"])
	}
	// A publish without a body is fine: version 2, description null.
	e.publish(tok, id, nil)
	a2, _ := e.agent(tok, id)
	if a2["status"] != "published" || a2["published_version"] != 2.0 {
		t.Fatalf("second publish: %v %v", a2["status"], a2["published_version"])
	}
	r = e.do("GET", "/api/v1/agents/"+id+"/versions/2", tok, nil)
	expect(t, r, 200)
	if d := r.Data(); d["description"] != nil || path(d, "llm_config.temperature") != 0.9 {
		t.Errorf("version 2 = %v", d)
	}
}

// checkRestoreOfFirstVersion restores version 1: 200, published at version 1 with
// version 1's configuration, no version 3.
func checkRestoreOfFirstVersion(t *testing.T, e *env, id string, v1 map[string]any) {
	t.Helper()
	tok := e.Owner.Token
	r := e.do("POST", "/api/v1/agents/"+id+"/versions/1/restore", tok, nil)
	expect(t, r, 200)
	restored := r.Data()
	if restored["status"] != "published" || restored["published_version"] != 1.0 {
		t.Errorf("restored: status %v, published_version %v", restored["status"], restored["published_version"])
	}
	if !reflect.DeepEqual(snapshotOf(restored), snapshotOf(v1)) {
		t.Errorf("restored configuration differs from version 1:\n%v\n%v", snapshotOf(restored), snapshotOf(v1))
	}
	if got, _ := e.agent(tok, id); !reflect.DeepEqual(got, restored) {
		t.Errorf("show after restore differs from the restore response")
	}
	vs := e.do("GET", "/api/v1/agents/"+id+"/versions", tok, nil).List()
	if got := versionNumbers(vs); !slices.Equal(got, []int{2, 1}) {
		t.Errorf("versions after restore = %v, want [2 1]", got)
	}
	expect(t, e.do("GET", "/api/v1/agents/"+id+"/versions/3", tok, nil), 404)
}

// checkVersionNumbersNeverReused checks the next publish after a restore is version 3,
// and that restoring the current version of a draft publishes it again.
func checkVersionNumbersNeverReused(t *testing.T, e *env, id string) {
	t.Helper()
	tok := e.Owner.Token
	e.publish(tok, id, nil)
	if got, _ := e.agent(tok, id); got["published_version"] != 3.0 {
		t.Errorf("publish after restore: published_version %v, want 3", got["published_version"])
	}
	// Restoring the current version of a draft publishes it again.
	expect(t, e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"name": "Draft again"}), 200)
	r := e.do("POST", "/api/v1/agents/"+id+"/versions/3/restore", tok, nil)
	expect(t, r, 200)
	if r.Data()["status"] != "published" || r.Data()["name"] != "States" {
		t.Errorf("restore of the live version: %v %v", r.Data()["status"], r.Data()["name"])
	}
}

func versionNumbers(list []any) []int {
	out := make([]int, len(list))
	for i, v := range list {
		out[i] = int(v.(map[string]any)["version_number"].(float64))
	}
	return out
}

func TestAgentVersionsListPaginated(t *testing.T) {
	e := newEnv(t)
	id := e.createAgent(e.Owner.Token, map[string]any{"name": "Many"})["id"].(string)
	for i := range 5 {
		e.publish(e.Owner.Token, id, map[string]any{"description": fmt.Sprint("v", i+1)})
	}
	var got []int
	next := ""
	for pages := 0; ; pages++ {
		q := "?per_page=2"
		if next != "" {
			q += "&cursor=" + url.QueryEscape(next)
		}
		r := e.do("GET", "/api/v1/agents/"+id+"/versions"+q, e.Owner.Token, nil)
		expect(t, r, 200)
		if n := len(r.List()); n > 2 || n == 0 {
			t.Fatalf("page of %d", n)
		}
		for _, v := range r.List() {
			if m := v.(map[string]any); m["description"] != fmt.Sprint("v", m["version_number"]) {
				t.Errorf("version %v has description %v", m["version_number"], m["description"])
			}
		}
		got = append(got, versionNumbers(r.List())...)
		n, _ := r.Meta()["next_cursor"].(string)
		if n == "" {
			break
		}
		next = n
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
	}
	if !slices.Equal(got, []int{5, 4, 3, 2, 1}) {
		t.Errorf("versions = %v, want newest first", got)
	}
	expectFields(t, e.do("GET", "/api/v1/agents/"+id+"/versions?per_page=0", e.Owner.Token, nil), "per_page")
	expectFields(t, e.do("GET", "/api/v1/agents/"+id+"/versions?cursor=x", e.Owner.Token, nil), "cursor")
	// A cursor of another agent's versions is foreign.
	other := e.createAgent(e.Owner.Token, map[string]any{"name": "Other"})["id"].(string)
	for range 2 {
		e.publish(e.Owner.Token, other, nil)
	}
	c := e.do("GET", "/api/v1/agents/"+other+"/versions?per_page=1", e.Owner.Token, nil).Meta()["next_cursor"].(string)
	expectFields(t, e.do("GET", "/api/v1/agents/"+id+"/versions?cursor="+url.QueryEscape(c), e.Owner.Token, nil), "cursor")
}

func TestAgentPublishDescription(t *testing.T) {
	e := newEnv(t)
	id := e.createAgent(e.Owner.Token, map[string]any{"name": "Desc"})["id"].(string)
	before, etag := e.agent(e.Owner.Token, id)
	for _, body := range []any{
		map[string]any{"description": strings.Repeat("é", 1001)},
		map[string]any{"description": 5},
		map[string]any{"descriptoin": "typo"},
	} {
		r := e.do("POST", "/api/v1/agents/"+id+"/publish", e.Owner.Token, body)
		expect(t, r, 422)
		if len(r.FieldErrors()) != 1 {
			t.Errorf("publish %v: errors %v", body, r.FieldErrors())
		}
	}
	expectFields(t, e.do("POST", "/api/v1/agents/"+id+"/publish", e.Owner.Token, map[string]any{"description": strings.Repeat("x", 1001)}), "description")
	if after, etag2 := e.agent(e.Owner.Token, id); !reflect.DeepEqual(before, after) || etag != etag2 {
		t.Errorf("rejected publish changed the agent")
	}
	if vs := e.do("GET", "/api/v1/agents/"+id+"/versions", e.Owner.Token, nil).List(); len(vs) != 0 {
		t.Errorf("rejected publish created %d versions", len(vs))
	}
	// 1000 characters (not bytes) is the limit.
	e.publish(e.Owner.Token, id, map[string]any{"description": strings.Repeat("é", 1000)})
	if vs := e.do("GET", "/api/v1/agents/"+id+"/versions", e.Owner.Token, nil).List(); len(vs) != 1 {
		t.Errorf("%d versions, want 1", len(vs))
	}
}

func TestAgentDeleteUnbindsMembers(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(e.Owner.Token, map[string]any{"name": "A"})["id"].(string)
	b := e.createAgent(e.Owner.Token, map[string]any{"name": "B"})["id"].(string)
	both := e.newUser("both@example.com", false)
	onlyA := e.newUser("only-a@example.com", false)
	bothToken := e.addMember(both, "developer", nil, []string{a, b})
	onlyToken := e.addMember(onlyA, "developer", nil, []string{a})
	expect(t, e.do("GET", "/api/v1/agents/"+a, onlyToken, nil), 200)

	expect(t, e.do("DELETE", "/api/v1/agents/"+a, e.Owner.Token, nil), 204)

	member := func(u *testUser) []any {
		r := e.do("GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users/"+u.ID, e.Owner.Token, nil)
		expect(t, r, 200)
		l, _ := r.Data()["agent_ids"].([]any)
		return l
	}
	if got := member(both); !reflect.DeepEqual(got, []any{b}) {
		t.Errorf("agent_ids of a member of A and B after deleting A = %v, want [%s]", got, b)
	}
	if got := member(onlyA); slices.Contains(got, any(a)) {
		t.Errorf("agent_ids still name the deleted agent: %v", got)
	}
	// Dropping the only agent must not widen access to every agent.
	if l := e.do("GET", "/api/v1/agents", onlyToken, nil).List(); len(l) != 0 {
		t.Errorf("member of only A lists %v after A's delete", itemIDs(l))
	}
	expect(t, e.do("GET", "/api/v1/agents/"+b, onlyToken, nil), 404)
	expect(t, e.do("GET", "/api/v1/agents/"+b, bothToken, nil), 200)
}

func TestAgentDiff(t *testing.T) {
	e := newEnv(t)
	id := publishTwoDiffVersions(t, e)
	checkVersionDiffs(t, e, id)
	checkDiffWithCurrent(t, e, id)
}

// publishTwoDiffVersions creates an agent with a key and two tools, publishes it,
// changes its name, temperature and first tool's name, publishes again, and returns its
// id.
func publishTwoDiffVersions(t *testing.T, e *env) string {
	t.Helper()
	tok := e.Owner.Token
	id := e.createAgent(tok, map[string]any{
		"name": "Support",
		"llm_config": map[string]any{"api_key": "sk-old-secret-1111", "tools": []any{
			map[string]any{"name": "end", "type": "end_call"},
			map[string]any{"name": "press", "type": "press_ivr"},
		}},
	})["id"].(string)
	e.publish(tok, id, nil)
	expect(t, e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{
		"name": "Support v2",
		"llm_config": map[string]any{"temperature": 0.8, "tools": []any{
			map[string]any{"name": "hang_up", "type": "end_call"},
			map[string]any{"name": "press", "type": "press_ivr"},
		}},
	}), 200)
	e.publish(tok, id, nil)
	return id
}

// agentDiff is the list the diff route p of agent id answers.
func agentDiff(t *testing.T, e *env, id, p string) []any {
	t.Helper()
	r := e.do("GET", "/api/v1/agents/"+id+"/versions/"+p, e.Owner.Token, nil)
	expect(t, r, 200)
	return r.List()
}

// checkVersionDiffs checks the diffs between the two versions both ways, of a version
// with itself, and of each version with the unchanged current configuration.
func checkVersionDiffs(t *testing.T, e *env, id string) {
	t.Helper()
	want12 := []any{
		map[string]any{"path": "llm_config.temperature", "old": 0.5, "new": 0.8},
		map[string]any{"path": "llm_config.tools.0.name", "old": "end", "new": "hang_up"},
		map[string]any{"path": "name", "old": "Support", "new": "Support v2"},
	}
	if got := agentDiff(t, e, id, "1/diff/2"); !reflect.DeepEqual(got, want12) {
		t.Errorf("diff 1→2 =\n%v\nwant\n%v", got, want12)
	}
	want21 := []any{
		map[string]any{"path": "llm_config.temperature", "old": 0.8, "new": 0.5},
		map[string]any{"path": "llm_config.tools.0.name", "old": "hang_up", "new": "end"},
		map[string]any{"path": "name", "old": "Support v2", "new": "Support"},
	}
	if got := agentDiff(t, e, id, "2/diff/1"); !reflect.DeepEqual(got, want21) {
		t.Errorf("diff 2→1 =\n%v\nwant\n%v", got, want21)
	}
	if got := agentDiff(t, e, id, "2/diff/2"); len(got) != 0 {
		t.Errorf("diff 2→2 = %v", got)
	}
	if got := agentDiff(t, e, id, "2/diff/current"); len(got) != 0 {
		t.Errorf("diff 2→current with nothing changed = %v", got)
	}
	if got := agentDiff(t, e, id, "1/diff/current"); !reflect.DeepEqual(got, want12) {
		t.Errorf("diff 1→current =\n%v\nwant\n%v", got, want12)
	}
}

// checkDiffWithCurrent checks a version against the current configuration: a new key
// (masked), a ring time, a tool removed, a group value set to null.
func checkDiffWithCurrent(t *testing.T, e *env, id string) {
	t.Helper()
	tok := e.Owner.Token
	expect(t, e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{
		"call_config":           map[string]any{"ring_duration_ms": 10000},
		"knowledge_base_config": map[string]any{"similarity_threshold": 0.4},
		"llm_config":            map[string]any{"api_key": "sk-new-secret-2222", "tools": []any{map[string]any{"name": "hang_up", "type": "end_call"}}},
	}), 200)
	got := agentDiff(t, e, id, "2/diff/current")
	wantPaths := []string{"call_config.ring_duration_ms", "knowledge_base_config.similarity_threshold", "llm_config.api_key", "llm_config.tools.1"}
	if len(got) != len(wantPaths) {
		t.Fatalf("diff 2→current = %v, want paths %v", got, wantPaths)
	}
	for i, c := range got {
		ch := c.(map[string]any)
		if ch["path"] != wantPaths[i] {
			t.Errorf("change %d path %v, want %s", i, ch["path"], wantPaths[i])
		}
	}
	checks := map[string][2]any{
		"call_config.ring_duration_ms":               {30000.0, 10000.0},
		"knowledge_base_config.similarity_threshold": {nil, 0.4},
		"llm_config.api_key":                         {"****1111", "****2222"},
	}
	for _, c := range got {
		ch := c.(map[string]any)
		if w, ok := checks[ch["path"].(string)]; ok && (ch["old"] != w[0] || ch["new"] != w[1]) {
			t.Errorf("%s: %v → %v, want %v → %v", ch["path"], ch["old"], ch["new"], w[0], w[1])
		}
		if ch["path"] == "llm_config.tools.1" {
			if old, _ := ch["old"].(map[string]any); old["name"] != "press" || ch["new"] != nil {
				t.Errorf("removed tool: %v → %v", ch["old"], ch["new"])
			}
		}
	}
}
