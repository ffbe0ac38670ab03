package server_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestNumbersOfHiddenAgentsAreReadOnly: a number belongs to no agent, so a developer
// limited to agent A reads every number; but one that routes calls of agent B (its
// inbound or outbound agent) or that B's open campaign dials from is not the developer's
// to change or delete: 403, the number, its binding and the campaign unchanged
// (conventions §6: a member acts only on its agents), nor to dial from (a campaign's
// create, 422 on number_id). A number of A alone stays theirs.
// Owners act on all. Both engines.
func TestNumbersOfHiddenAgentsAreReadOnly(t *testing.T) {
	e := newEnv(t)
	owner := e.Owner.Token
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
	inboundB := number("+14155550101", map[string]any{"inbound_agent_id": b})
	outboundB := number("+14155550102", map[string]any{"inbound_agent_id": a, "outbound_agent_id": b})
	dialedForB := number("+14155550103", nil)
	ofA := number("+14155550104", map[string]any{"inbound_agent_id": a})
	r := e.do("POST", "/api/v1/campaigns", owner, map[string]any{"name": "B's", "agent_id": b, "number_id": dialedForB,
		"window": everyDay, "max_concurrent": 1, "start_at": "2099-01-01T00:00:00Z",
		"recipients": []any{map[string]any{"phone_number": "+14155550200"}}})
	expect(t, r, 201)
	campaign := r.Data()["id"].(string)

	ws := e.Owner.WorkspaceID
	u := e.newUser("dev@example.com", false)
	expect(t, e.do("POST", "/api/v1/workspaces/"+ws+"/users", owner, map[string]any{"id": u.ID, "role": data.RoleDeveloper, "agent_ids": []string{a}}), 201)
	dev := e.tokenIn(u, ws)
	for _, id := range []string{inboundB, outboundB, dialedForB} {
		before := e.do("GET", "/api/v1/numbers/"+id, owner, nil)
		expect(t, before, 200)
		for _, c := range []struct {
			method string
			body   any
		}{
			{"PUT", map[string]any{"inbound_agent_id": a}},
			{"PUT", map[string]any{"outbound_agent_id": nil}},
			{"PUT", map[string]any{"nickname": "mine now"}},
			{"DELETE", nil},
		} {
			res := e.do(c.method, "/api/v1/numbers/"+id, dev, c.body)
			expect(t, res, 403)
			// 403, not 409: the token may not act for B; and B stays unnamed (conventions §2).
			if msg := string(res.Body); !strings.Contains(msg, "agent outside your access") || strings.Contains(msg, b) || strings.Contains(msg, campaign) {
				t.Errorf("%s %s: the refusal should say an agent outside the caller's access is acted for, naming none: %s", c.method, id, msg)
			}
		}
		if after := e.do("GET", "/api/v1/numbers/"+id, owner, nil); string(after.Body) != string(before.Body) {
			t.Errorf("number %s changed: %s\nwas %s", id, after.Body, before.Body)
		}
		expect(t, e.do("GET", "/api/v1/numbers/"+id, dev, nil), 200) // still read
	}
	if st := e.do("GET", "/api/v1/campaigns/"+campaign, owner, nil).Data()["status"]; st == "canceled" {
		t.Errorf("B's campaign was canceled by the developer's delete of its number")
	}
	// Nor does the developer dial from such a number: A's campaign would call from B's
	// line (its calls back reach B) and make the number read-only to B's members.
	campaignFrom := func(number string) *response {
		return e.do("POST", "/api/v1/campaigns", dev, map[string]any{"name": "A's", "agent_id": a, "number_id": number,
			"window": everyDay, "max_concurrent": 1, "start_at": "2099-01-01T00:00:00Z",
			"recipients": []any{map[string]any{"phone_number": "+14155550201"}}})
	}
	for _, id := range []string{inboundB, outboundB, dialedForB} {
		expectFields(t, campaignFrom(id), "number_id")
	}
	if list := e.do("GET", "/api/v1/campaigns", owner, nil).List(); len(list) != 1 {
		t.Errorf("%d campaigns after the refused ones; want B's alone", len(list))
	}
	expect(t, campaignFrom(ofA), 201)
	expect(t, e.do("PUT", "/api/v1/numbers/"+ofA, dev, map[string]any{"nickname": "A's line", "outbound_agent_id": a}), 200)
	expect(t, e.do("DELETE", "/api/v1/numbers/"+ofA, dev, nil), 204)
	expect(t, e.do("PUT", "/api/v1/numbers/"+inboundB, owner, map[string]any{"inbound_agent_id": a}), 200)
	expect(t, e.do("DELETE", "/api/v1/numbers/"+dialedForB, owner, nil), 204)
}
