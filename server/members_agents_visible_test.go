package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestMembersNameOnlyAgentsTheCallerSees: a member list read by a caller limited to some
// agents names, in each member's agent_ids, only the agents the caller sees, so that the
// list never reveals an agent outside the caller's agent_ids (conventions §2, §6): a
// member limited to agents the caller does not see reads as limited to no agent at all,
// never as [] (every agent). Those who see every agent read the lists as stored.
func TestMembersNameOnlyAgentsTheCallerSees(t *testing.T) {
	e := newEnv(t)
	owner := e.Owner.Token
	agent := func(name string) string {
		r := e.do("POST", "/api/v1/agents", owner, map[string]any{"name": name})
		expect(t, r, 201)
		return r.Data()["id"].(string)
	}
	a, b := agent("A"), agent("B")
	ws := e.Owner.WorkspaceID
	base := "/api/v1/workspaces/" + ws + "/users"
	stored := map[string][]string{} // user id → agent_ids as stored
	member := func(name string, agents []string) string {
		u := e.newUser(name+"@example.com", false)
		expect(t, e.do("POST", base, owner, map[string]any{"id": u.ID, "role": "developer", "agent_ids": agents}), 201)
		stored[u.ID] = agents
		return u.ID
	}
	reader := e.newUser("reader@example.com", false)
	expect(t, e.do("POST", base, owner, map[string]any{"id": reader.ID, "role": "member", "agent_ids": []string{a}}), 201)
	stored[reader.ID] = []string{a}
	onlyB := member("onlyb", []string{b})
	both := member("both", []string{a, b})
	every := member("every", []string{})
	stored[e.Owner.ID] = []string{}

	limitedKey := e.do("POST", "/api/v1/api-keys", owner, map[string]any{"name": "A only", "agent_ids": []string{a}})
	expect(t, limitedKey, 201)
	seesA := map[string][]string{reader.ID: {a}, onlyB: {data.NoAgent}, both: {a}, every: {}, e.Owner.ID: {}}
	for _, c := range []struct {
		name, token string
		want        map[string][]string
	}{
		{"member limited to A", e.tokenIn(reader, ws), seesA},
		{"owner's key narrowed to A", limitedKey.JSON()["token"].(string), seesA},
		{"owner", owner, stored},
	} {
		t.Run(c.name, func(t *testing.T) {
			list := e.do("GET", base+"?per_page=100", c.token, nil)
			expect(t, list, 200)
			got := map[string][]string{}
			for _, it := range list.List() {
				m := it.(map[string]any)
				got[m["id"].(string)] = strs(m["agent_ids"])
			}
			for id, want := range c.want {
				if !slices.Equal(got[id], want) {
					t.Errorf("list: %s's agent_ids %v, want %v", id, got[id], want)
				}
				show := e.do("GET", base+"/"+id, c.token, nil)
				expect(t, show, 200)
				if g := strs(show.Data()["agent_ids"]); !slices.Equal(g, want) {
					t.Errorf("show: %s's agent_ids %v, want %v", id, g, want)
				}
				if c.token != owner && strings.Contains(string(show.Body), b) {
					t.Errorf("show of %s names agent B: %s", id, show.Body)
				}
			}
			if c.token != owner && strings.Contains(string(list.Body), b) {
				t.Errorf("the list names agent B: %s", list.Body)
			}
		})
	}
}

// strs reads a JSON array of strings.
func strs(v any) []string {
	out := []string{}
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// TestKeyListNamesOnlyAgentsTheCallerSees: GET /api-keys read by a key narrowed to agent
// A lists its user's other keys with only the agents it sees: a key narrowed to B reads as
// narrowed to no agent the caller sees. The user's sign-in reads every key as stored.
func TestKeyListNamesOnlyAgentsTheCallerSees(t *testing.T) {
	e := newEnv(t)
	owner := e.Owner.Token
	agent := func(name string) string {
		r := e.do("POST", "/api/v1/agents", owner, map[string]any{"name": name})
		expect(t, r, 201)
		return r.Data()["id"].(string)
	}
	a, b := agent("A"), agent("B")
	key := func(name string, agents []string) (int64, string) {
		r := e.do("POST", "/api/v1/api-keys", owner, map[string]any{"name": name, "agent_ids": agents})
		expect(t, r, 201)
		return int64(r.Data()["id"].(float64)), r.JSON()["token"].(string)
	}
	keyA, tokenA := key("A only", []string{a})
	keyB, _ := key("B only", []string{b})
	for _, c := range []struct {
		name, token string
		want        map[int64][]string
	}{
		{"key narrowed to A", tokenA, map[int64][]string{keyA: {a}, keyB: {data.NoAgent}}},
		{"owner", owner, map[int64][]string{keyA: {a}, keyB: {b}}},
	} {
		r := e.do("GET", "/api/v1/api-keys?per_page=100", c.token, nil)
		expect(t, r, 200)
		got := map[int64][]string{}
		for _, it := range r.List() {
			m := it.(map[string]any)
			got[int64(m["id"].(float64))] = strs(m["agent_ids"])
		}
		for id, want := range c.want {
			if !slices.Equal(got[id], want) {
				t.Errorf("%s: key %d's agent_ids %v, want %v", c.name, id, got[id], want)
			}
		}
		if c.token != owner && strings.Contains(string(r.Body), b) {
			t.Errorf("%s: the list names agent B: %s", c.name, r.Body)
		}
	}
}
