package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// typesWithPrefix are the catalog's event types (in its order) whose resource, the part
// before the dot, is one of resources.
func typesWithPrefix(resources ...string) []string {
	out := []string{}
	for _, t := range data.EventTypes {
		res, _, _ := strings.Cut(t, ".")
		if slices.Contains(resources, res) {
			out = append(out, t)
		}
	}
	return out
}

// securityResources are the resources of the security events (audit:read).
var securityResources = []string{"webhook", "workspace", "member", "api_key", "user", "subscription", "backup", "retention", "price_table"}

// fanOutAll moves every recorded event to the webhooks' delivery logs, as the
// dispatcher would, without posting anything.
func fanOutAll(t *testing.T, s *testkit.Server) {
	t.Helper()
	for {
		n, err := s.Svc.Deliveries.FanOut(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// deliveryIDs are the ids of a page of deliveries.
func deliveryIDs(list []any) []string {
	out := []string{}
	for _, d := range list {
		out = append(out, d.(map[string]any)["id"].(string))
	}
	return out
}

// TestWebhookReadsHoldTheEventLimit: a webhook's delivery log names events (their ids,
// types, times and the receiver's answers), so a token reads it only when it may read
// every event type the webhook carries now: its types and the webhook.test events sent
// to it, both named by the webhook's own record; otherwise 403 naming those types. The
// deliveries of types the webhook carried before (a wider filter) that the token may not
// read are passed over, never named, not even in a 403: naming them would tell which
// such events happened. The webhook's own record holds no event and stays readable with
// webhooks:read; event-types answers each token its own rule. Both engines
// (VOICEAPI_TEST_BACKEND=postgres).
func TestWebhookReadsHoldTheEventLimit(t *testing.T) {
	s := testkit.NewServer(t, nil)
	own := s.Owner.Token
	create := func(events ...string) string { return webhookOf(t, s, own, events...) }
	all := create("*")
	calls := create(data.EventCallRegistered, data.EventCallEnded)
	narrowed := create("*")

	// Events of each kind: an agent's, a call's, a security event, and a test event.
	agent := s.Do("POST", "/api/v1/agents", own, map[string]any{"name": "Leak check"})
	testkit.Expect(t, agent, 201)
	agentID := agent.Data()["id"].(string)
	call := s.Do("POST", "/api/v1/calls", own, map[string]any{"agent_id": agentID, "direction": "web", "status": "ended"})
	testkit.Expect(t, call, 201)
	testkit.Expect(t, s.Do("PUT", "/api/v1/workspaces/"+s.Owner.WorkspaceID, own, map[string]any{"name": "Renamed"}), 200)
	testkit.Expect(t, s.Do("POST", "/api/v1/webhooks/"+calls+"/test", own, nil), 202)
	fanOutAll(t, s)
	// narrowed carried every event until now; its log keeps them.
	testkit.Expect(t, s.Do("PUT", "/api/v1/webhooks/"+narrowed, own, map[string]any{"events": []string{data.EventCallRegistered, data.EventCallEnded}}), 200)

	signIn := login2(t, s, s.Owner.Email, s.Owner.Password)
	callers := []struct {
		name   string
		scopes []string // the key's; nil for the sign-in
		offers []string // event-types' answer
		token  string
	}{
		{"webhooks:read alone", []string{data.ScopeWebhooksRead}, []string{}, ""},
		{"+ call_history:read", []string{data.ScopeWebhooksRead, "call_history:read"}, typesWithPrefix("call", "campaign"), ""},
		{"+ audit:read", []string{data.ScopeWebhooksRead, data.ScopeAuditRead}, typesWithPrefix(securityResources...), ""},
		{"+ call_history:read and audit:read", []string{data.ScopeWebhooksRead, "call_history:read", data.ScopeAuditRead},
			typesWithPrefix(append([]string{"call", "campaign"}, securityResources...)...), ""},
		{"owner sign-in", nil, data.EventTypes, signIn},
	}
	for i := range callers {
		if callers[i].scopes != nil {
			callers[i].token = keyWithScopes(t, s, callers[i].scopes...)
		}
	}
	// scopesOf are the read scopes that every event of a type needs: its module's,
	// audit:read for a security event, and for job.failed those of the job kinds' modules.
	scopesOf := func(typ string) []string {
		switch res, _, _ := strings.Cut(typ, "."); res {
		case "call", "campaign":
			return []string{"call_history:read"}
		case "agent", "agent_test", "test_run":
			return []string{"agents:read"}
		case "knowledge_base":
			return []string{"knowledge_base:read"}
		case "number":
			return []string{"phone_numbers:read"}
		case "job":
			return []string{"agents:read", "knowledge_base:read", "call_history:read"}
		}
		return []string{data.ScopeAuditRead}
	}
	// refusal is the 403's message for hidden types, naming the scopes caller c lacks.
	refusal := func(c int, hidden []string) string {
		need := map[string]bool{}
		for _, typ := range hidden {
			for _, sc := range scopesOf(typ) {
				need[sc] = !slices.Contains(callers[c].scopes, sc)
			}
		}
		var lacks []string
		for _, sc := range data.Scopes {
			if need[sc] {
				lacks = append(lacks, sc)
			}
		}
		return fmt.Sprintf("This token may not read every event the webhook carries (%s): this API key lacks %s.", strings.Join(hidden, ", "), strings.Join(lacks, ", "))
	}
	// config are the webhooks' filters now; narrowed carried every event before, and its
	// log keeps them.
	config := map[string][]string{all: data.EventTypes, calls: {data.EventCallRegistered, data.EventCallEnded},
		narrowed: {data.EventCallRegistered, data.EventCallEnded}}
	// hidden are the types webhook id carries now (its filter, and the test events sent
	// to it) that caller c may not read, as the 403 names them (none when it reads them).
	hidden := func(c int, id string) []string {
		holds := append([]string{data.EventWebhookTest}, config[id]...)
		var out []string
		for _, t := range data.EventTypes {
			if slices.Contains(holds, t) && !slices.Contains(callers[c].offers, t) {
				out = append(out, t)
			}
		}
		return out
	}
	// readable are the ids of the owner's page that caller c may read.
	readable := func(c int, page *testkit.Response) []string {
		out := []string{}
		for _, d := range page.List() {
			if d := d.(map[string]any); slices.Contains(callers[c].offers, d["event_type"].(string)) {
				out = append(out, d["id"].(string))
			}
		}
		return out
	}

	// The case the webhook's filter alone would miss is there: a token that reads every
	// type narrowed carries now, but not every type its log holds.
	ownNarrowed := s.Do("GET", "/api/v1/webhooks/"+narrowed+"/deliveries?per_page=100", own, nil)
	if len(hidden(3, narrowed)) > 0 || len(readable(3, ownNarrowed)) == len(ownNarrowed.List()) {
		t.Fatalf("narrowed's log holds nothing hidden from %s: %s", callers[3].name, ownNarrowed.Body)
	}
	for c, caller := range callers {
		t.Run(caller.name, func(t *testing.T) {
			types, withheld := eventTypesOf(t, s, caller.token)
			if !slices.Equal(types, caller.offers) || len(types)+len(withheld) != len(data.EventTypes) {
				t.Errorf("event-types: offered %v, withheld %v; want offered %v", types, withheld, caller.offers)
			}
			for _, id := range []string{all, calls, narrowed} {
				show := s.Do("GET", "/api/v1/webhooks/"+id, caller.token, nil)
				testkit.Expect(t, show, 200)
				if want := s.Do("GET", "/api/v1/webhooks/"+id, own, nil); string(show.Body) != string(want.Body) {
					t.Errorf("show %s: %s, the owner's %s", id, show.Body, want.Body)
				}

				path := "/api/v1/webhooks/" + id + "/deliveries?per_page=100"
				mine := s.Do("GET", path, own, nil)
				testkit.Expect(t, mine, 200)
				if len(mine.List()) == 0 {
					t.Fatalf("webhook %s has no deliveries to read", id)
				}
				first := s.Do("GET", "/api/v1/webhooks/"+id+"/deliveries?per_page=1", caller.token, nil)
				if h := hidden(c, id); len(h) > 0 {
					msg := refusal(c, h)
					for _, r := range []*testkit.Response{s.Do("GET", path, caller.token, nil), first} {
						if r.Status != 403 || r.Code() != "forbidden" || r.JSON()["message"] != msg {
							t.Errorf("GET %s deliveries: %d %s, want 403 %q", id, r.Status, r.Body, msg)
						}
					}
					continue
				}
				// The page is the owner's without what the caller may not read; its
				// cursor leads on to the next readable delivery.
				want := readable(c, mine)
				r := s.Do("GET", path, caller.token, nil)
				testkit.Expect(t, r, 200)
				if got := deliveryIDs(r.List()); !slices.Equal(got, want) {
					t.Errorf("GET %s: %v, want the owner's readable %v", path, got, want)
				}
				for _, d := range r.List() {
					if typ := d.(map[string]any)["event_type"].(string); !slices.Contains(caller.offers, typ) {
						t.Errorf("GET %s lists a %s delivery", path, typ)
					}
				}
				next, _ := first.Meta()["next_cursor"].(string)
				if len(want) < 2 || next == "" {
					t.Fatalf("webhook %s: no second readable page: %s", id, first.Body)
				}
				second := s.Do("GET", "/api/v1/webhooks/"+id+"/deliveries?per_page=1&cursor="+next, caller.token, nil)
				testkit.Expect(t, second, 200)
				if got := deliveryIDs(second.List()); !slices.Equal(got, want[1:2]) {
					t.Errorf("webhook %s, second page: %v, want %v", id, got, want[1:2])
				}
			}
		})
	}

	// A retry of a delivery the caller may not read finds none (404), as the list shows
	// none; one it reads gets as far as its state (409: still pending, not dispatched
	// here), as the owner's retry of either does.
	var hiddenID, shownID string
	for _, d := range ownNarrowed.List() {
		d := d.(map[string]any)
		if slices.Contains(callers[3].offers, d["event_type"].(string)) {
			shownID = d["id"].(string)
		} else {
			hiddenID = d["id"].(string)
		}
	}
	retry := func(id string) string { return "/api/v1/webhooks/" + narrowed + "/deliveries/" + id + "/retry" }
	writer := keyWithScopes(t, s, append([]string{data.ScopeWebhooksWrite}, callers[3].scopes...)...)
	for _, c := range []struct {
		token    string
		delivery string
		status   int
	}{{writer, hiddenID, 404}, {writer, shownID, 409}, {own, hiddenID, 409}} {
		r := s.Do("POST", retry(c.delivery), c.token, nil)
		if r.Status != c.status || strings.Contains(string(r.Body), data.EventAgentCreated) {
			t.Errorf("retry of %s: %d %s, want %d naming no hidden type", c.delivery, r.Status, r.Body, c.status)
		}
	}
}

// TestWebhookTestEventNeedsItsReader: POST /webhooks/{id}/test answers with the
// webhook.test event (a security event: its actor, its place in the audit chain) and
// queues a delivery that names it, so a key with scopes needs audit:read to send one,
// as it does to read or retry that delivery. Refused, nothing is recorded.
func TestWebhookTestEventNeedsItsReader(t *testing.T) {
	s := testkit.NewServer(t, nil)
	own := s.Owner.Token
	r := s.Do("POST", "/api/v1/webhooks", own, map[string]any{"url": "https://example.com/calls", "events": []string{data.EventCallEnded}})
	testkit.Expect(t, r, 201)
	id := r.Data()["id"].(string)
	logged := func() int {
		fanOutAll(t, s)
		return len(s.Do("GET", "/api/v1/webhooks/"+id+"/deliveries?per_page=100", own, nil).List())
	}
	for _, c := range []struct {
		scopes []string
		status int
		msg    string
	}{
		{[]string{data.ScopeWebhooksWrite}, 403, "This token may not read every event the webhook carries (webhook.test): this API key lacks audit:read."},
		{[]string{data.ScopeWebhooksWrite, "call_history:read"}, 403, "This token may not read every event the webhook carries (webhook.test): this API key lacks audit:read."},
		{[]string{data.ScopeWebhooksWrite, data.ScopeAuditRead}, 202, ""},
		{nil, 202, ""},
	} {
		token := own
		if c.scopes != nil {
			token = keyWithScopes(t, s, c.scopes...)
		}
		before := logged()
		r := s.Do("POST", "/api/v1/webhooks/"+id+"/test", token, nil)
		after := logged()
		switch {
		case r.Status != c.status:
			t.Errorf("%v: %d %s, want %d", c.scopes, r.Status, r.Body, c.status)
		case c.status == 403 && (r.JSON()["message"] != c.msg || after != before):
			t.Errorf("%v: %s; deliveries %d, then %d", c.scopes, r.Body, before, after)
		case c.status == 202 && (r.Data()["type"] != data.EventWebhookTest || after != before+1):
			t.Errorf("%v: %s; deliveries %d, then %d", c.scopes, r.Body, before, after)
		}
	}
}

// TestWebhookDeleteNeedsItsReader: deleting a webhook silences every event it carries,
// so a key with scopes deletes one only when it may read every event of its types, as it
// changes, tests or replays one: webhooks:write alone cannot delete the owner's webhook
// of security events (403 naming the types and the scopes it lacks), which stays, no
// webhook.deleted recorded. A key that reads them all deletes it (204). Before, the
// route's webhooks:write was enough.
func TestWebhookDeleteNeedsItsReader(t *testing.T) {
	s := testkit.NewServer(t, nil)
	own := s.Owner.Token
	create := func(events ...string) string { return webhookOf(t, s, own, events...) }
	deleted := func() int {
		r := s.Do("GET", "/api/v1/audit-log?per_page=100&type="+data.EventWebhookDeleted, own, nil)
		testkit.Expect(t, r, 200)
		return len(r.List())
	}
	security := create(data.EventAPIKeyCreated, data.EventUserLoginFailed)
	every := create("*")
	for _, c := range []struct {
		name   string
		scopes []string
		id     string
		status int
		msg    string
	}{
		{"webhooks:write alone, security events", []string{data.ScopeWebhooksWrite}, security, 403,
			"This token may not read every event the webhook carries (api_key.created, user.login_failed): this API key lacks audit:read."},
		{"+ call_history:read, security events", []string{data.ScopeWebhooksWrite, "call_history:read"}, security, 403,
			"This token may not read every event the webhook carries (api_key.created, user.login_failed): this API key lacks audit:read."},
		{"+ audit:read, every event", []string{data.ScopeWebhooksWrite, data.ScopeAuditRead}, every, 403, "lacks agents:read, knowledge_base:read, phone_numbers:read, call_history:read"},
		{"+ audit:read, security events", []string{data.ScopeWebhooksWrite, data.ScopeAuditRead}, security, 204, ""},
		{"owner, every event", nil, every, 204, ""},
	} {
		token := own
		if c.scopes != nil {
			token = keyWithScopes(t, s, c.scopes...)
		}
		before := deleted()
		r := s.Do("DELETE", "/api/v1/webhooks/"+c.id, token, nil)
		if c.status == 204 {
			testkit.Expect(t, r, 204)
			testkit.Expect(t, s.Do("GET", "/api/v1/webhooks/"+c.id, own, nil), 404)
			if n := deleted() - before; n != 1 {
				t.Errorf("%s: %d webhook.deleted events, want 1", c.name, n)
			}
			continue
		}
		if r.Status != 403 || r.Code() != "forbidden" || !strings.Contains(r.JSON()["message"].(string), c.msg) {
			t.Errorf("%s: DELETE %d %s, want 403 %q", c.name, r.Status, r.Body, c.msg)
		}
		testkit.Expect(t, s.Do("GET", "/api/v1/webhooks/"+c.id, own, nil), 200)
		if n := deleted() - before; n != 0 {
			t.Errorf("%s: refused, yet %d webhook.deleted events recorded", c.name, n)
		}
	}
}

// webhookOf creates, as token, a webhook of events at a URL named by the first one, and
// returns its id.
func webhookOf(t *testing.T, s *testkit.Server, token string, events ...string) string {
	t.Helper()
	r := s.Do("POST", "/api/v1/webhooks", token, map[string]any{"url": "https://example.com/" + events[0], "events": events})
	testkit.Expect(t, r, 201)
	return r.Data()["id"].(string)
}
