package server_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

func TestNumberCreateShowAndEvents(t *testing.T) {
	e := newEnv(t)
	ws := e.Owner.WorkspaceID
	agent := e.newAgent(ws, nil)
	r := e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{
		"phone_number": "+14155550123", "nickname": "Front desk", "provider": "twilio", "inbound_agent_id": agent,
	})
	expect(t, r, 201)
	n := r.Data()
	if n["phone_number"] != "+14155550123" || n["nickname"] != "Front desk" || n["provider"] != "twilio" ||
		n["inbound_agent_id"] != agent || n["outbound_agent_id"] != nil || n["workspace_id"] != ws ||
		!strings.HasPrefix(str(n, "id"), "num_") || n["created_at"] == nil {
		t.Fatalf("created number: %v", n)
	}
	if r.Header.Get("ETag") == "" {
		t.Error("no ETag on 201")
	}
	show := e.do("GET", "/api/v1/numbers/"+str(n, "id"), e.Owner.Token, nil)
	expect(t, show, 200)
	if show.Header.Get("ETag") != r.Header.Get("ETag") {
		t.Error("ETag of show differs from create's for the same record")
	}
	if got := e.countEvents(ws, data.EventNumberCreated); got != 1 {
		t.Errorf("number.created events = %d", got)
	}
	expect(t, e.do("GET", "/api/v1/numbers/num_01JD6ZZZZZZZZZZZZZZZZZZZZZ", e.Owner.Token, nil), 404)
	expect(t, e.do("GET", "/api/v1/numbers/not-an-id", e.Owner.Token, nil), 404)
}

func TestNumberValidation(t *testing.T) {
	e := newEnv(t)
	other := e.newUser("other@example.com", false)
	foreignAgent := e.newAgent(other.WorkspaceID, nil)
	ok := func(over map[string]any) map[string]any {
		b := map[string]any{"phone_number": "+14155550100", "provider": "sip"}
		for k, v := range over {
			b[k] = v
		}
		return b
	}
	bad := []struct {
		name  string
		body  any
		paths []string
	}{
		{"missing", map[string]any{}, []string{"phone_number", "provider"}},
		{"no plus", ok(map[string]any{"phone_number": "14155550100"}), []string{"phone_number"}},
		{"leading zero", ok(map[string]any{"phone_number": "+04155550100"}), []string{"phone_number"}},
		{"one digit", ok(map[string]any{"phone_number": "+1"}), []string{"phone_number"}},
		{"16 digits", ok(map[string]any{"phone_number": "+1234567890123456"}), []string{"phone_number"}},
		{"letters", ok(map[string]any{"phone_number": "+1415555O100"}), []string{"phone_number"}},
		{"unknown provider", ok(map[string]any{"provider": "plivo"}), []string{"provider"}},
		{"nickname 256", ok(map[string]any{"nickname": strings.Repeat("n", 256)}), []string{"nickname"}},
		{"unknown field", ok(map[string]any{"agent_id": "x"}), []string{"agent_id"}},
		{"null provider", ok(map[string]any{"provider": nil}), []string{"provider"}},
		{"foreign agent", ok(map[string]any{"inbound_agent_id": foreignAgent}), []string{"inbound_agent_id"}},
		{"malformed agent", ok(map[string]any{"outbound_agent_id": "agt_x"}), []string{"outbound_agent_id"}},
		{"wrong type", ok(map[string]any{"nickname": 5}), []string{"nickname"}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			expectFields(t, e.do("POST", "/api/v1/numbers", e.Owner.Token, c.body), c.paths...)
		})
	}
	good := []map[string]any{
		ok(map[string]any{"phone_number": "+12"}),
		ok(map[string]any{"phone_number": "+123456789012345"}),
		ok(map[string]any{"phone_number": "+14155550101", "nickname": strings.Repeat("é", 255)}),
	}
	for i, p := range data.NumberProviders {
		good = append(good, ok(map[string]any{"phone_number": fmt.Sprintf("+4930123456%d", i), "provider": p}))
	}
	for _, b := range good {
		expect(t, e.do("POST", "/api/v1/numbers", e.Owner.Token, b), 201)
	}
	list := e.do("GET", "/api/v1/numbers?per_page=100", e.Owner.Token, nil)
	if got := len(listIDs(t, list)); got != len(good) {
		t.Errorf("stored %d numbers, want %d: bad input must store nothing", got, len(good))
	}
	expect(t, e.do("POST", "/api/v1/numbers", e.Owner.Token, "[1]"), 400)
	expect(t, e.do("POST", "/api/v1/numbers", e.Owner.Token, "{", "Content-Type", "text/plain"), 415)
}

func TestNumberRegisteredAnywhereIsConflict(t *testing.T) {
	e := newEnv(t)
	other := e.newUser("other@example.com", false)
	body := map[string]any{"phone_number": "+442071838750", "provider": "vonage"}
	expect(t, e.do("POST", "/api/v1/numbers", e.Owner.Token, body), 201)
	expect(t, e.do("POST", "/api/v1/numbers", e.Owner.Token, body), 409)
	expect(t, e.do("POST", "/api/v1/numbers", other.Token, body), 409)
}

func TestNumberListFilterAndPagination(t *testing.T) {
	e := newEnv(t)
	ws := e.Owner.WorkspaceID
	a, b := e.newAgent(ws, nil), e.newAgent(ws, nil)
	mk := func(phone string, in, out any) string {
		r := e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": phone, "provider": "telnyx", "inbound_agent_id": in, "outbound_agent_id": out})
		expect(t, r, 201)
		return str(r.Data(), "id")
	}
	n1 := mk("+15550000001", a, nil)
	n2 := mk("+15550000002", nil, a)
	n3 := mk("+15550000003", a, a)
	n4 := mk("+15550000004", b, nil)
	n5 := mk("+15550000005", nil, nil)
	got := listIDs(t, e.do("GET", "/api/v1/numbers?agent_id="+a, e.Owner.Token, nil))
	if strings.Join(got, ",") != strings.Join([]string{n3, n2, n1}, ",") {
		t.Errorf("agent a's numbers = %v", got)
	}
	if got := listIDs(t, e.do("GET", "/api/v1/numbers?agent_id="+b, e.Owner.Token, nil)); len(got) != 1 || got[0] != n4 {
		t.Errorf("agent b's numbers = %v", got)
	}
	expectFields(t, e.do("GET", "/api/v1/numbers?agent_id=nope", e.Owner.Token, nil), "agent_id")
	// Walk every number two by two, then back.
	var walked []string
	path := "/api/v1/numbers?per_page=2"
	var pages []*response
	for {
		r := e.do("GET", path, e.Owner.Token, nil)
		walked = append(walked, listIDs(t, r)...)
		pages = append(pages, r)
		next, _ := r.Meta()["next_cursor"].(string)
		if next == "" {
			break
		}
		path = "/api/v1/numbers?per_page=2&cursor=" + next
	}
	if strings.Join(walked, ",") != strings.Join([]string{n5, n4, n3, n2, n1}, ",") {
		t.Errorf("walk = %v", walked)
	}
	prev := pages[1].Meta()["prev_cursor"].(string)
	if back := listIDs(t, e.do("GET", "/api/v1/numbers?per_page=2&cursor="+prev, e.Owner.Token, nil)); strings.Join(back, ",") != n5+","+n4 {
		t.Errorf("back = %v", back)
	}
	expectFields(t, e.do("GET", "/api/v1/numbers?cursor=AAAA", e.Owner.Token, nil), "cursor")
}

func TestNumberUpdateAndDelete(t *testing.T) {
	e := newEnv(t)
	ws := e.Owner.WorkspaceID
	a, b := e.newAgent(ws, nil), e.newAgent(ws, nil)
	r := e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+33140000000", "provider": "twilio", "inbound_agent_id": a, "outbound_agent_id": a})
	expect(t, r, 201)
	id, etag := str(r.Data(), "id"), r.Header.Get("ETag")
	path := "/api/v1/numbers/" + id

	// Bad updates change nothing.
	expectFields(t, e.do("PUT", path, e.Owner.Token, map[string]any{"phone_number": "+33140000001", "provider": "x", "nickname": nil}), "phone_number", "provider", "nickname")
	expectFields(t, e.do("PUT", path, e.Owner.Token, map[string]any{"inbound_agent_id": e.newAgent(e.newUser("x@example.com", false).WorkspaceID, nil)}), "inbound_agent_id")
	if after := e.do("GET", path, e.Owner.Token, nil); after.Header.Get("ETag") != etag {
		t.Fatalf("a refused update changed the number: %s", after.Body)
	}

	r = e.do("PUT", path, e.Owner.Token, map[string]any{"nickname": "Paris", "inbound_agent_id": nil, "outbound_agent_id": b}, "If-Match", etag)
	expect(t, r, 200)
	n := r.Data()
	if n["nickname"] != "Paris" || n["inbound_agent_id"] != nil || n["outbound_agent_id"] != b || n["provider"] != "twilio" {
		t.Fatalf("updated: %v", n)
	}
	if got := listIDs(t, e.do("GET", "/api/v1/numbers?agent_id="+a, e.Owner.Token, nil)); len(got) != 0 {
		t.Errorf("unbound agent still lists the number: %v", got)
	}
	if got := listIDs(t, e.do("GET", "/api/v1/numbers?agent_id="+b, e.Owner.Token, nil)); len(got) != 1 {
		t.Errorf("newly bound agent lists %v", got)
	}
	expect(t, e.do("PUT", path, e.Owner.Token, map[string]any{"nickname": "stale"}, "If-Match", etag), 412)
	expect(t, e.do("DELETE", path, e.Owner.Token, nil, "If-Match", etag), 412)

	other := e.newUser("other@example.com", false)
	expect(t, e.do("GET", path, other.Token, nil), 404)
	expect(t, e.do("PUT", path, other.Token, map[string]any{"nickname": "mine"}), 404)
	expect(t, e.do("DELETE", path, other.Token, nil), 404)

	expect(t, e.do("DELETE", path, e.Owner.Token, nil), 204)
	expect(t, e.do("GET", path, e.Owner.Token, nil), 404)
	expect(t, e.do("DELETE", path, e.Owner.Token, nil), 404)
	for _, typ := range []string{data.EventNumberCreated, data.EventNumberUpdated, data.EventNumberDeleted} {
		if e.countEvents(ws, typ) != 1 {
			t.Errorf("%s events: %v", typ, e.eventTypes(ws))
		}
	}
	// The phone number is free again, in any workspace.
	expect(t, e.do("POST", "/api/v1/numbers", other.Token, map[string]any{"phone_number": "+33140000000", "provider": "sip"}), 201)
}

func TestNumberPermissions(t *testing.T) {
	e := newEnv(t)
	ws := e.Owner.WorkspaceID
	a, b := e.newAgent(ws, nil), e.newAgent(ws, nil)
	r := e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+4915100000000", "provider": "sip"})
	expect(t, r, 201)
	member := e.member(ws, "m@example.com", data.RoleMember, nil, nil)
	expect(t, e.do("GET", "/api/v1/numbers", member, nil), 200)
	expect(t, e.do("POST", "/api/v1/numbers", member, map[string]any{"phone_number": "+4915100000001", "provider": "sip"}), 403)
	noModule := e.member(ws, "d@example.com", data.RoleDeveloper, []string{data.ModuleAgents}, nil)
	expect(t, e.do("GET", "/api/v1/numbers", noModule, nil), 403)
	limited := e.member(ws, "l@example.com", data.RoleDeveloper, nil, []string{a})
	expect(t, e.do("POST", "/api/v1/numbers", limited, map[string]any{"phone_number": "+4915100000002", "provider": "sip", "inbound_agent_id": a}), 201)
	expectFields(t, e.do("POST", "/api/v1/numbers", limited, map[string]any{"phone_number": "+4915100000003", "provider": "sip", "inbound_agent_id": b}), "inbound_agent_id")
	expect(t, e.do("GET", "/api/v1/numbers", "", nil), 401)
}

// TestNumberQuotaUnderConcurrency fires 50 creates at once against a limit of 10: the
// check and the insert share one write transaction, so exactly 10 pass.
func TestNumberQuotaUnderConcurrency(t *testing.T) {
	e := newEnv(t)
	ws := e.Owner.WorkspaceID
	if _, err := e.setSubscription(t.Context(), ws, data.SubscriptionSet{Limits: map[string]int64{data.LimitNumbers: 10}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	statuses := make([]int, 50)
	codes := make([]string, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": fmt.Sprintf("+1202555%04d", i), "provider": "twilio"})
			statuses[i], codes[i] = r.Status, r.Code()
		}()
	}
	wg.Wait()
	created, refused := 0, 0
	for i, s := range statuses {
		switch {
		case s == 201:
			created++
		case s == 403 && codes[i] == data.EQUOTA:
			refused++
		default:
			t.Errorf("request %d: %d %s", i, s, codes[i])
		}
	}
	stored := listIDs(t, e.do("GET", "/api/v1/numbers?per_page=100", e.Owner.Token, nil))
	if created != 10 || refused != 40 || len(stored) != 10 {
		t.Fatalf("created %d, refused %d, stored %d; want 10, 40, 10", created, refused, len(stored))
	}
	r := e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+12025559999", "provider": "twilio"})
	expect(t, r, 403)
	if !strings.Contains(r.JSON()["message"].(string), "numbers") {
		t.Errorf("quota message does not name the limit: %s", r.Body)
	}
}
