package server_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestNumberAccessSaysWhatAWriteGets: a number's show answers, beside the record,
// whether the caller may change it (access.write), and that is what a write then gets:
// 200 where it says true, 403 where it says false. Callers: an owner; a developer
// limited to agent A (a number of A's, or of no agent, is theirs; one bound to agent B,
// or that B's open campaign dials from, is not); a member (reads only); a developer's
// key scoped to phone_numbers:read. The verdict is the caller's, not the record's: every
// caller's ETag of one number is the same where it reads the same data (a caller limited
// to A reads B's binding as data.HiddenAgent, so its ETag is of that). Both engines.
func TestNumberAccessSaysWhatAWriteGets(t *testing.T) {
	e := newEnv(t)
	owner, ws := e.Owner.Token, e.Owner.WorkspaceID
	agent := func(name string) string {
		r := e.do("POST", "/api/v1/agents", owner, map[string]any{"name": name})
		expect(t, r, 201)
		id := r.Data()["id"].(string)
		expect(t, e.do("POST", "/api/v1/agents/"+id+"/publish", owner, nil), 204)
		return id
	}
	a, b := agent("A"), agent("B")
	number := func(phone string, bind map[string]any) string {
		body := map[string]any{"phone_number": phone, "provider": "twilio"}
		for k, v := range bind {
			body[k] = v
		}
		r := e.do("POST", "/api/v1/numbers", owner, body)
		expect(t, r, 201)
		if got := accessWrite(t, r); got != true {
			t.Errorf("the owner's create answers access.write %v, want true", got)
		}
		return r.Data()["id"].(string)
	}
	ofA, unbound := number("+14155550101", map[string]any{"inbound_agent_id": a}), number("+14155550102", nil)
	ofB, dialedForB := number("+14155550103", map[string]any{"outbound_agent_id": b}), number("+14155550104", nil)
	expect(t, e.do("POST", "/api/v1/campaigns", owner, map[string]any{"name": "B's", "agent_id": b, "number_id": dialedForB,
		"window": everyDay, "max_concurrent": 1, "start_at": "2099-01-01T00:00:00Z",
		"recipients": []any{map[string]any{"phone_number": "+14155550200"}}}), 201)

	member := func(email, role string, agentIDs []string) string {
		u := e.newUser(email, false)
		expect(t, e.do("POST", "/api/v1/workspaces/"+ws+"/users", owner, map[string]any{"id": u.ID, "role": role,
			"modules": []string{data.ModuleAgents, data.ModulePhoneNumbers}, "agent_ids": agentIDs}), 201)
		return e.tokenIn(u, ws)
	}
	limited := member("limited@example.com", data.RoleDeveloper, []string{a})
	reader := member("reader@example.com", data.RoleMember, []string{})
	dev := member("dev@example.com", data.RoleDeveloper, []string{})
	key := e.do("POST", "/api/v1/api-keys", dev, map[string]any{"name": "read only", "scopes": []string{data.ReadScope(data.ModulePhoneNumbers)}})
	expect(t, key, 201)
	readKey := key.JSON()["token"].(string)

	callers := []struct {
		name, token string
		writes      map[string]bool
	}{
		{"owner", owner, map[string]bool{ofA: true, unbound: true, ofB: true, dialedForB: true}},
		{"developer limited to A", limited, map[string]bool{ofA: true, unbound: true, ofB: false, dialedForB: false}},
		{"member", reader, map[string]bool{ofA: false, unbound: false, ofB: false, dialedForB: false}},
		{"phone_numbers:read key", readKey, map[string]bool{ofA: false, unbound: false, ofB: false, dialedForB: false}},
	}
	etags := map[string]string{}
	for _, c := range callers {
		for id, want := range c.writes {
			show := e.do("GET", "/api/v1/numbers/"+id, c.token, nil)
			expect(t, show, 200)
			if got := accessWrite(t, show); got != want {
				t.Errorf("%s: number %s answers access.write %v, want %v", c.name, id, got, want)
			}
			// The ETag covers data as the caller reads it: the same for every caller who
			// reads the same record (the developer limited to A reads B as the sentinel).
			shown, _ := json.Marshal(show.Data())
			if tag := show.Header.Get("ETag"); etags[id+string(shown)] == "" {
				etags[id+string(shown)] = tag
			} else if tag != etags[id+string(shown)] {
				t.Errorf("%s: number %s has ETag %s, another caller's is %s: access is the caller's, not the record's", c.name, id, tag, etags[id+string(shown)])
			}
			// What the write gets: an update that changes nothing, with the show's ETag.
			put := e.do("PUT", "/api/v1/numbers/"+id, c.token, map[string]any{}, "If-Match", show.Header.Get("ETag"))
			if want {
				expect(t, put, 200)
				if got := accessWrite(t, put); got != true {
					t.Errorf("%s: the update of %s answers access.write %v, want true", c.name, id, got)
				}
			} else {
				expect(t, put, 403)
			}
		}
	}
}

// TestNumberListSaysWhatEachNumberPermits: the number list answers, beside the page and
// by id, what the caller may do with each number (access), the same as each number's
// show; access.dial is what a campaign's create naming the number gets: 201 where true,
// the 422 on number_id where the number serves an agent the caller does not see. Callers:
// an owner; a developer limited to agent A with call_history (a number of A's, or of no
// agent, is theirs to dial from; one bound to B, or that B's open campaign dials from,
// is not); a developer without call_history (changes numbers, dials from none); a member
// (neither). Both engines.
func TestNumberListSaysWhatEachNumberPermits(t *testing.T) {
	e := newEnv(t)
	owner, ws := e.Owner.Token, e.Owner.WorkspaceID
	agent := func(name string) string {
		r := e.do("POST", "/api/v1/agents", owner, map[string]any{"name": name})
		expect(t, r, 201)
		id := r.Data()["id"].(string)
		expect(t, e.do("POST", "/api/v1/agents/"+id+"/publish", owner, nil), 204)
		return id
	}
	a, b := agent("A"), agent("B")
	number := func(phone string, bind map[string]any) string {
		body := map[string]any{"phone_number": phone, "provider": "twilio"}
		for k, v := range bind {
			body[k] = v
		}
		r := e.do("POST", "/api/v1/numbers", owner, body)
		expect(t, r, 201)
		return r.Data()["id"].(string)
	}
	ofA, unbound := number("+14155550101", map[string]any{"inbound_agent_id": a}), number("+14155550102", nil)
	ofB, dialedForB := number("+14155550103", map[string]any{"outbound_agent_id": b}), number("+14155550104", nil)
	expect(t, e.do("POST", "/api/v1/campaigns", owner, map[string]any{"name": "B's", "agent_id": b, "number_id": dialedForB,
		"window": everyDay, "max_concurrent": 1, "start_at": "2099-01-01T00:00:00Z",
		"recipients": []any{map[string]any{"phone_number": "+14155550200"}}}), 201)

	member := func(email, role string, modules, agentIDs []string) string {
		u := e.newUser(email, false)
		expect(t, e.do("POST", "/api/v1/workspaces/"+ws+"/users", owner, map[string]any{"id": u.ID, "role": role,
			"modules": modules, "agent_ids": agentIDs}), 201)
		return e.tokenIn(u, ws)
	}
	all := []string{data.ModuleAgents, data.ModulePhoneNumbers, data.ModuleCallHistory}
	limited := member("limited@example.com", data.RoleDeveloper, all, []string{a})
	noCampaigns := member("numbers@example.com", data.RoleDeveloper, []string{data.ModuleAgents, data.ModulePhoneNumbers}, []string{})
	reader := member("reader@example.com", data.RoleMember, all, []string{})

	type verdict struct{ write, dial bool }
	yes, no := verdict{true, true}, verdict{false, false}
	callers := []struct {
		name, token string
		want        map[string]verdict
	}{
		{"owner", owner, map[string]verdict{ofA: yes, unbound: yes, ofB: yes, dialedForB: yes}},
		{"developer limited to A", limited, map[string]verdict{ofA: yes, unbound: yes, ofB: no, dialedForB: no}},
		{"developer without call_history", noCampaigns, map[string]verdict{ofA: {true, false}, unbound: {true, false}, ofB: {true, false}, dialedForB: {true, false}}},
		{"member", reader, map[string]verdict{ofA: no, unbound: no, ofB: no, dialedForB: no}},
	}
	for _, c := range callers {
		list := e.do("GET", "/api/v1/numbers?per_page=100", c.token, nil)
		expect(t, list, 200)
		var body struct {
			Data   []map[string]any          `json:"data"`
			Access map[string]map[string]any `json:"access"`
		}
		if err := json.Unmarshal(list.Body, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Data) != 4 || len(body.Access) != 4 {
			t.Fatalf("%s: the list has %d numbers and access for %d: %s", c.name, len(body.Data), len(body.Access), list.Body)
		}
		for id, want := range c.want {
			got := body.Access[id]
			if got["write"] != want.write || got["dial"] != want.dial {
				t.Errorf("%s: the list says number %s permits %v, want write %v, dial %v", c.name, id, got, want.write, want.dial)
			}
			show := e.do("GET", "/api/v1/numbers/"+id, c.token, nil)
			expect(t, show, 200)
			var one struct {
				Access map[string]any `json:"access"`
			}
			if err := json.Unmarshal(show.Body, &one); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(one.Access) != fmt.Sprint(got) {
				t.Errorf("%s: number %s's show says %v, the list %v", c.name, id, one.Access, got)
			}
		}
	}
	// access.dial is what a campaign's create naming the number gets.
	for id, want := range callers[1].want {
		r := e.do("POST", "/api/v1/campaigns", limited, map[string]any{"name": "A's " + id, "agent_id": a, "number_id": id,
			"window": everyDay, "max_concurrent": 1, "start_at": "2099-01-01T00:00:00Z",
			"recipients": []any{map[string]any{"phone_number": "+14155550201"}}})
		if want.dial {
			expect(t, r, 201)
		} else {
			expectFields(t, r, "number_id")
		}
	}
}
