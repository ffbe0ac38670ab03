package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// callEnv is a workspace with two agents and a number, ready for calls.
type callEnv struct {
	*env
	ws, agentA, agentB, number string
}

func newCallEnv(t *testing.T) *callEnv {
	e := newEnv(t)
	ws := e.Owner.WorkspaceID
	c := &callEnv{env: e, ws: ws, agentA: e.newAgent(ws, intp(3)), agentB: e.newAgent(ws, nil)}
	r := e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550123", "provider": "twilio"})
	expect(t, r, 201)
	c.number = str(r.Data(), "id")
	return c
}

func (c *callEnv) register(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	if body["agent_id"] == nil {
		body["agent_id"] = c.agentA
	}
	if body["direction"] == nil {
		body["direction"] = "web"
	}
	r := c.do("POST", "/api/v1/calls", c.Owner.Token, body)
	expect(t, r, 201)
	return r.Data()
}

func TestCallRegisterDefaults(t *testing.T) {
	c := newCallEnv(t)
	call := c.register(t, map[string]any{})
	if call["status"] != "registered" || call["agent_id"] != c.agentA || call["agent_version"] != float64(3) ||
		call["number_id"] != nil || call["started_at"] != nil || call["ended_at"] != nil || call["duration_ms"] != nil ||
		call["analysis"] != nil || !strings.HasPrefix(str(call, "id"), "call_") || call["workspace_id"] != c.ws {
		t.Fatalf("registered call: %v", call)
	}
	if tr, ok := call["transcript"].([]any); !ok || len(tr) != 0 {
		t.Errorf("transcript = %v, want []", call["transcript"])
	}
	if v, ok := call["variables"].(map[string]any); !ok || len(v) != 0 {
		t.Errorf("variables = %v, want {}", call["variables"])
	}
	unpublished := c.register(t, map[string]any{"agent_id": c.agentB})
	if unpublished["agent_version"] != nil {
		t.Errorf("agent_version of a never published agent = %v", unpublished["agent_version"])
	}
	explicit := c.register(t, map[string]any{"agent_version": 1})
	if explicit["agent_version"] != float64(1) {
		t.Errorf("given agent_version not kept: %v", explicit["agent_version"])
	}
	full := c.register(t, map[string]any{
		"direction": "inbound", "number_id": c.number, "from_number": "+15551230000", "to_number": "sip:desk@pbx.example.com",
		"status": "ended", "started_at": "2026-11-21T10:00:00Z", "ended_at": "2026-11-21T10:01:30.5Z",
		"disconnection_reason": "user_hangup", "recording_url": "https://rec.example.com/1.wav",
		"transcript": []any{map[string]any{"role": "agent", "content": "Hello", "start_ms": 0}, map[string]any{"role": "user", "content": "Hi", "start_ms": 900}},
		"variables":  map[string]any{"name": "Ada"}, "analysis": map[string]any{"sentiment": "positive"}, "metadata": map[string]any{"crm": 42},
	})
	if full["duration_ms"] != float64(90500) || full["ended_at"] != "2026-11-21T10:01:30.500Z" || full["number_id"] != c.number {
		t.Errorf("full call: %v", full)
	}
	types := c.eventTypes(c.ws)
	want := map[string]int{data.EventCallRegistered: 4, data.EventCallEnded: 1, data.EventCallAnalyzed: 1}
	for typ, n := range want {
		if c.countEvents(c.ws, typ) != n {
			t.Errorf("%s: events %v", typ, types)
		}
	}
}

func TestCallRegisterValidation(t *testing.T) {
	c := newCallEnv(t)
	other := c.newUser("other@example.com", false)
	foreignAgent := c.newAgent(other.WorkspaceID, nil)
	r := c.do("POST", "/api/v1/numbers", other.Token, map[string]any{"phone_number": "+14155550999", "provider": "sip"})
	expect(t, r, 201)
	foreignNumber := str(r.Data(), "id")
	cb := callBodies{agent: c.agentA, unpublished: c.agentB}
	bad := append(cb.refusedFieldCases(foreignAgent, foreignNumber), cb.refusedContentCases()...)
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			expectFields(t, c.do("POST", "/api/v1/calls", c.Owner.Token, tc.body), tc.paths...)
		})
	}
	if got := listIDs(t, c.do("GET", "/api/v1/calls", c.Owner.Token, nil)); len(got) != 0 {
		t.Fatalf("refused registers stored calls: %v", got)
	}
	checkCallBoundsPass(t, c, cb)
}

// callBodies builds register bodies for agent (published, its last version 3);
// unpublished is an agent never published.
type callBodies struct{ agent, unpublished string }

// base is a valid outbound register body with over's fields set, "<absent>" removing one.
func (cb callBodies) base(over map[string]any) map[string]any {
	b := map[string]any{"agent_id": cb.agent, "direction": "outbound", "from_number": "+15550000000", "to_number": "+15550000001"}
	for k, v := range over {
		if v == "<absent>" {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return b
}

// callItem is one transcript item.
func callItem(role, content string, start int) map[string]any {
	return map[string]any{"role": role, "content": content, "start_ms": start}
}

// callItems is a transcript of n user items.
func callItems(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = callItem("user", "x", i)
	}
	return out
}

// callBodyCase is a refused register body and the paths its faults name.
type callBodyCase struct {
	name  string
	body  map[string]any
	paths []string
}

// refusedFieldCases are bodies refused for their agent, numbers, direction, status,
// version, duration or times.
func (cb callBodies) refusedFieldCases(foreignAgent, foreignNumber string) []callBodyCase {
	return []callBodyCase{
		{"empty", map[string]any{}, []string{"agent_id", "direction"}},
		{"unknown direction", cb.base(map[string]any{"direction": "sideways"}), []string{"direction"}},
		{"unknown status", cb.base(map[string]any{"status": "paused"}), []string{"status"}},
		{"foreign agent", cb.base(map[string]any{"agent_id": foreignAgent}), []string{"agent_id"}},
		{"unknown agent", cb.base(map[string]any{"agent_id": "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ"}), []string{"agent_id"}},
		{"foreign number", cb.base(map[string]any{"number_id": foreignNumber}), []string{"number_id"}},
		{"malformed number id", cb.base(map[string]any{"number_id": "num_1"}), []string{"number_id"}},
		{"bad from", cb.base(map[string]any{"from_number": "555-0100"}), []string{"from_number"}},
		{"bad sip", cb.base(map[string]any{"to_number": "sip:nohost"}), []string{"to_number"}},
		{"inbound needs numbers", cb.base(map[string]any{"direction": "inbound", "from_number": "<absent>", "to_number": "<absent>"}), []string{"from_number", "to_number"}},
		{"agent_version 0", cb.base(map[string]any{"agent_version": 0}), []string{"agent_version"}},
		{"agent_version past the last", cb.base(map[string]any{"agent_version": 4}), []string{"agent_version"}},
		{"agent_version of a never published agent", cb.base(map[string]any{"agent_id": cb.unpublished, "agent_version": 1}), []string{"agent_version"}},
		{"duration over", cb.base(map[string]any{"status": "ended", "duration_ms": 86_400_001}), []string{"duration_ms"}},
		{"duration negative", cb.base(map[string]any{"status": "ended", "duration_ms": -1}), []string{"duration_ms"}},
		{"started while registered", cb.base(map[string]any{"started_at": "2026-11-21T10:00:00Z"}), []string{"started_at"}},
		{"ended while ongoing", cb.base(map[string]any{"status": "ongoing", "ended_at": "2026-11-21T10:00:00Z", "duration_ms": 5}), []string{"ended_at", "duration_ms"}},
		{"ends before start", cb.base(map[string]any{"status": "ended", "started_at": "2026-11-21T10:00:00Z", "ended_at": "2026-11-21T09:00:00Z"}), []string{"ended_at"}},
		{"bad timestamp", cb.base(map[string]any{"status": "ongoing", "started_at": "yesterday"}), []string{"started_at"}},
	}
}

// refusedContentCases are bodies refused for their transcript, metadata, variables,
// reason, recording or fields.
func (cb callBodies) refusedContentCases() []callBodyCase {
	return []callBodyCase{
		{"role unknown", cb.base(map[string]any{"transcript": []any{callItem("bot", "x", 0)}}), []string{"transcript.0.role"}},
		{"role missing", cb.base(map[string]any{"transcript": []any{map[string]any{"content": "x", "start_ms": 0}}}), []string{"transcript.0.role"}},
		{"content over", cb.base(map[string]any{"transcript": []any{callItem("agent", strings.Repeat("a", 10001), 0)}}), []string{"transcript.0.content"}},
		{"start_ms negative", cb.base(map[string]any{"transcript": []any{callItem("tool", "x", -1)}}), []string{"transcript.0.start_ms"}},
		{"start_ms over", cb.base(map[string]any{"transcript": []any{callItem("tool", "x", 86_400_001)}}), []string{"transcript.0.start_ms"}},
		{"2001 items", cb.base(map[string]any{"transcript": callItems(2001)}), []string{"transcript"}},
		{"item unknown field", cb.base(map[string]any{"transcript": []any{map[string]any{"role": "user", "content": "x", "start_ms": 0, "speaker": 1}}}), []string{"transcript.0.speaker"}},
		{"metadata over 64 KiB", cb.base(map[string]any{"metadata": map[string]any{"blob": strings.Repeat("m", 64<<10)}}), []string{"metadata"}},
		{"variables not object", cb.base(map[string]any{"variables": []any{1}}), []string{"variables"}},
		{"blank reason", cb.base(map[string]any{"disconnection_reason": " "}), []string{"disconnection_reason"}},
		{"reason over", cb.base(map[string]any{"disconnection_reason": strings.Repeat("r", 101)}), []string{"disconnection_reason"}},
		{"recording ftp", cb.base(map[string]any{"recording_url": "ftp://x/y"}), []string{"recording_url"}},
		{"unknown field", cb.base(map[string]any{"temprature": 1}), []string{"temprature"}},
		{"null direction", cb.base(map[string]any{"direction": nil}), []string{"direction"}},
	}
}

// checkCallBoundsPass checks the bounds themselves pass, with every direction and status.
func checkCallBoundsPass(t *testing.T, c *callEnv, cb callBodies) {
	t.Helper()
	good := []map[string]any{
		cb.base(map[string]any{"transcript": callItems(2000)}),
		cb.base(map[string]any{"transcript": []any{callItem("agent", strings.Repeat("a", 10000), 86_400_000)}}),
		cb.base(map[string]any{"status": "ended", "duration_ms": 86_400_000, "disconnection_reason": strings.Repeat("r", 100)}),
		cb.base(map[string]any{"from_number": "sips:alice@example.com", "to_number": "+12"}),
		cb.base(map[string]any{"agent_version": 3}), // the last version given
	}
	for _, d := range data.CallDirections {
		good = append(good, cb.base(map[string]any{"direction": d}))
	}
	for _, s := range data.CallStatuses {
		good = append(good, cb.base(map[string]any{"status": s}))
	}
	for _, b := range good {
		expect(t, c.do("POST", "/api/v1/calls", c.Owner.Token, b), 201)
	}
}

func TestCallStateMachine(t *testing.T) {
	c := newCallEnv(t)
	call := c.register(t, map[string]any{})
	path := "/api/v1/calls/" + str(call, "id")
	put := func(body map[string]any, headers ...string) *response {
		return c.do("PUT", path, c.Owner.Token, body, headers...)
	}
	expect(t, put(map[string]any{"status": "registered"}), 200)
	r := put(map[string]any{"status": "ongoing"})
	expect(t, r, 200)
	if r.Data()["started_at"] == nil {
		t.Error("ongoing call has no started_at")
	}
	expect(t, put(map[string]any{"status": "registered"}), 409)
	etag := r.Header.Get("ETag")
	expect(t, put(map[string]any{"status": "ended", "started_at": "2026-11-21T10:00:00Z", "ended_at": "2026-11-21T10:00:10Z", "disconnection_reason": "agent_hangup"}, "If-Match", `"stale"`), 412)
	r = put(map[string]any{"status": "ended", "started_at": "2026-11-21T10:00:00Z", "ended_at": "2026-11-21T10:00:10Z", "disconnection_reason": "agent_hangup"}, "If-Match", etag)
	expect(t, r, 200)
	ended := r.Data()
	if ended["duration_ms"] != float64(10000) || ended["status"] != "ended" {
		t.Fatalf("ended: %v", ended)
	}
	before := c.do("GET", path, c.Owner.Token, nil)
	for _, body := range []map[string]any{
		{"status": "ongoing"}, {"status": "failed"}, {"status": "registered"},
		{"duration_ms": 5}, {"ended_at": "2026-11-21T11:00:00Z"}, {"disconnection_reason": "other"},
	} {
		expect(t, put(body), 409)
	}
	expectFields(t, put(map[string]any{"status": "gone", "transcript": []any{map[string]any{"role": "x"}}}), "status", "transcript.0.role")
	if after := c.do("GET", path, c.Owner.Token, nil); string(after.Body) != string(before.Body) {
		t.Fatalf("refused updates changed the call:\n%s\n%s", before.Body, after.Body)
	}
	// Repeating the final values is not a change; analysis and variables may be added.
	r = put(map[string]any{"status": "ended", "duration_ms": 10000, "analysis": map[string]any{"summary": "ok"}, "variables": map[string]any{"k": "v"}, "recording_url": "https://r.example.com/x"})
	expect(t, r, 200)
	if a := r.Data()["analysis"].(map[string]any); a["summary"] != "ok" {
		t.Errorf("analysis = %v", a)
	}
	for typ, n := range map[string]int{data.EventCallRegistered: 1, data.EventCallStarted: 1, data.EventCallEnded: 1, data.EventCallAnalyzed: 1} {
		if c.countEvents(c.ws, typ) != n {
			t.Errorf("%s: %v", typ, c.eventTypes(c.ws))
		}
	}
	// registered → failed directly, without a start.
	failed := c.register(t, map[string]any{})
	r = c.do("PUT", "/api/v1/calls/"+str(failed, "id"), c.Owner.Token, map[string]any{"status": "failed", "disconnection_reason": "dial_failed"})
	expect(t, r, 200)
	if r.Data()["ended_at"] == nil || r.Data()["duration_ms"] != nil {
		t.Errorf("failed before start: %v", r.Data())
	}
	expect(t, c.do("PUT", "/api/v1/calls/call_01JD6ZZZZZZZZZZZZZZZZZZZZZ", c.Owner.Token, map[string]any{"status": "ongoing"}), 404)
}

func TestCallListFilters(t *testing.T) {
	c := newCallEnv(t)
	mk := func(body map[string]any) string {
		time.Sleep(2 * time.Millisecond) // distinct created_at milliseconds for from/to
		return str(c.register(t, body), "id")
	}
	c1 := mk(map[string]any{"agent_id": c.agentA, "direction": "web"})
	c2 := mk(map[string]any{"agent_id": c.agentB, "direction": "inbound", "number_id": c.number, "from_number": "+15550000000", "to_number": "+14155550123", "status": "ongoing"})
	c3 := mk(map[string]any{"agent_id": c.agentA, "direction": "outbound", "number_id": c.number, "from_number": "+14155550123", "to_number": "+15550000000", "status": "ended"})
	c4 := mk(map[string]any{"agent_id": c.agentB, "direction": "web", "status": "failed"})
	c5 := mk(map[string]any{"agent_id": c.agentA, "direction": "web", "status": "ongoing"})
	created := map[string]string{}
	for _, id := range []string{c1, c2, c3, c4, c5} {
		created[id] = str(c.do("GET", "/api/v1/calls/"+id, c.Owner.Token, nil).Data(), "created_at")
	}
	cases := []struct {
		query string
		want  []string
	}{
		{"", []string{c5, c4, c3, c2, c1}},
		{"agent_id=" + c.agentA, []string{c5, c3, c1}},
		{"agent_id=" + c.agentB, []string{c4, c2}},
		{"number_id=" + c.number, []string{c3, c2}},
		{"direction=web", []string{c5, c4, c1}},
		{"direction=inbound", []string{c2}},
		{"direction=outbound", []string{c3}},
		{"status=ongoing", []string{c5, c2}},
		{"status=registered", []string{c1}},
		{"status=ended", []string{c3}},
		{"status=failed", []string{c4}},
		{"agent_id=" + c.agentA + "&status=ongoing", []string{c5}},
		{"agent_id=" + c.agentB + "&direction=web&status=failed", []string{c4}},
		{"from=" + created[c2], []string{c5, c4, c3, c2}},
		{"to=" + created[c4], []string{c3, c2, c1}},
		{"from=" + created[c2] + "&to=" + created[c5] + "&agent_id=" + c.agentA, []string{c3}},
		{"number_id=num_01JD6ZZZZZZZZZZZZZZZZZZZZZ", nil},
	}
	for _, tc := range cases {
		got := listIDs(t, c.do("GET", "/api/v1/calls?"+tc.query, c.Owner.Token, nil))
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("?%s = %v, want %v", tc.query, got, tc.want)
		}
	}
	// A status change moves the call between status scopes.
	expect(t, c.do("PUT", "/api/v1/calls/"+c1, c.Owner.Token, map[string]any{"status": "ongoing"}), 200)
	if got := listIDs(t, c.do("GET", "/api/v1/calls?status=ongoing", c.Owner.Token, nil)); strings.Join(got, ",") != c5+","+c2+","+c1 {
		t.Errorf("after the move, ongoing = %v", got)
	}
	if got := listIDs(t, c.do("GET", "/api/v1/calls?status=registered", c.Owner.Token, nil)); len(got) != 0 {
		t.Errorf("after the move, registered = %v", got)
	}
	expectFields(t, c.do("GET", "/api/v1/calls?agent_id=x&number_id=y&direction=up&status=done&from=today&to=1&per_page=0", c.Owner.Token, nil),
		"agent_id", "number_id", "direction", "status", "from", "to", "per_page")
	expectFields(t, c.do("GET", "/api/v1/calls?from="+created[c3]+"&to="+created[c2], c.Owner.Token, nil), "to")
}

func TestCallListPagination(t *testing.T) {
	c := newCallEnv(t)
	var all []string
	for i := range 7 {
		agent := c.agentA
		if i%2 == 1 {
			agent = c.agentB
		}
		all = append([]string{str(c.register(t, map[string]any{"agent_id": agent}), "id")}, all...)
	}
	walk := func(query string) ([]string, []*response) {
		var got []string
		var pages []*response
		path := "/api/v1/calls?per_page=2" + query
		for range 10 {
			r := c.do("GET", path, c.Owner.Token, nil)
			got = append(got, listIDs(t, r)...)
			pages = append(pages, r)
			next, _ := r.Meta()["next_cursor"].(string)
			if next == "" {
				return got, pages
			}
			path = "/api/v1/calls?per_page=2" + query + "&cursor=" + next
		}
		t.Fatal("walk does not end")
		return nil, nil
	}
	got, pages := walk("")
	if strings.Join(got, ",") != strings.Join(all, ",") || len(pages) != 4 {
		t.Fatalf("walk = %v (%d pages), want %v", got, len(pages), all)
	}
	if pages[0].Meta()["prev_cursor"] != nil {
		t.Error("first page has a prev_cursor")
	}
	prev := pages[2].Meta()["prev_cursor"].(string)
	back := listIDs(t, c.do("GET", "/api/v1/calls?per_page=2&cursor="+prev, c.Owner.Token, nil))
	if strings.Join(back, ",") != strings.Join(all[2:4], ",") {
		t.Errorf("prev page = %v, want %v", back, all[2:4])
	}
	var wantA []string
	for i, id := range all {
		if (len(all)-1-i)%2 == 0 {
			wantA = append(wantA, id)
		}
	}
	gotA, _ := walk("&agent_id=" + c.agentA)
	if strings.Join(gotA, ",") != strings.Join(wantA, ",") {
		t.Errorf("agent walk = %v, want %v", gotA, wantA)
	}
	// A cursor is bound to its filters.
	next := pages[0].Meta()["next_cursor"].(string)
	expectFields(t, c.do("GET", "/api/v1/calls?status=ended&cursor="+next, c.Owner.Token, nil), "cursor")
	expectFields(t, c.do("GET", "/api/v1/calls?cursor="+next[:len(next)-2]+"AA", c.Owner.Token, nil), "cursor")
}

func TestCallAgentRestrictionAndDelete(t *testing.T) {
	c := newCallEnv(t)
	mine := str(c.register(t, map[string]any{"agent_id": c.agentA}), "id")
	theirs := str(c.register(t, map[string]any{"agent_id": c.agentB}), "id")
	limited := c.member(c.ws, "l@example.com", data.RoleDeveloper, nil, []string{c.agentA})
	if got := listIDs(t, c.do("GET", "/api/v1/calls", limited, nil)); len(got) != 1 || got[0] != mine {
		t.Errorf("limited list = %v", got)
	}
	if got := listIDs(t, c.do("GET", "/api/v1/calls?agent_id="+c.agentB, limited, nil)); len(got) != 0 {
		t.Errorf("limited list of another agent = %v", got)
	}
	if got := listIDs(t, c.do("GET", "/api/v1/calls?status=registered", limited, nil)); len(got) != 1 {
		t.Errorf("limited filtered list = %v", got)
	}
	expect(t, c.do("GET", "/api/v1/calls/"+mine, limited, nil), 200)
	expect(t, c.do("GET", "/api/v1/calls/"+theirs, limited, nil), 404)
	expect(t, c.do("PUT", "/api/v1/calls/"+theirs, limited, map[string]any{"status": "ongoing"}), 404)
	expect(t, c.do("DELETE", "/api/v1/calls/"+theirs, limited, nil), 404)
	expectFields(t, c.do("POST", "/api/v1/calls", limited, map[string]any{"agent_id": c.agentB, "direction": "web"}), "agent_id")

	member := c.member(c.ws, "m@example.com", data.RoleMember, nil, nil)
	expect(t, c.do("GET", "/api/v1/calls", member, nil), 200)
	expect(t, c.do("POST", "/api/v1/calls", member, map[string]any{"agent_id": c.agentA, "direction": "web"}), 403)
	noModule := c.member(c.ws, "n@example.com", data.RoleDeveloper, []string{data.ModuleAnalytics}, nil)
	expect(t, c.do("GET", "/api/v1/calls/"+mine, noModule, nil), 403)

	other := c.newUser("other@example.com", false)
	expect(t, c.do("GET", "/api/v1/calls/"+mine, other.Token, nil), 404)
	expect(t, c.do("DELETE", "/api/v1/calls/"+mine, other.Token, nil), 404)

	expect(t, c.do("DELETE", "/api/v1/calls/"+mine, limited, nil), 204)
	expect(t, c.do("GET", "/api/v1/calls/"+mine, c.Owner.Token, nil), 404)
	if got := listIDs(t, c.do("GET", "/api/v1/calls?agent_id="+c.agentA, c.Owner.Token, nil)); len(got) != 0 {
		t.Errorf("deleted call still indexed: %v", got)
	}
}

func TestCallMinutesQuota(t *testing.T) {
	c := newCallEnv(t)
	if _, err := c.setSubscription(t.Context(), c.ws, data.SubscriptionSet{Limits: map[string]int64{data.LimitCallMinutes: 2}}); err != nil {
		t.Fatal(err)
	}
	c.register(t, map[string]any{"status": "ended", "duration_ms": 60_000})
	call := c.register(t, map[string]any{"status": "ongoing"})
	// Ending the ongoing call uses the second minute: the next register is refused.
	now := time.Now().UTC()
	expect(t, c.do("PUT", "/api/v1/calls/"+str(call, "id"), c.Owner.Token, map[string]any{"status": "ended", "ended_at": now.Format(time.RFC3339Nano), "duration_ms": 30_000}), 200)
	sub := c.do("GET", "/api/v1/subscription", c.Owner.Token, nil).Data()
	if u := sub["usage"].(map[string]any)["call_minutes_per_month"]; u != float64(2) {
		t.Errorf("minutes used = %v, want 2 (90 s rounded up)", u)
	}
	r := c.do("POST", "/api/v1/calls", c.Owner.Token, map[string]any{"agent_id": c.agentA, "direction": "web"})
	expect(t, r, 403)
	if r.Code() != data.EQUOTA || !strings.Contains(r.JSON()["message"].(string), "call_minutes_per_month") {
		t.Errorf("refusal: %s", r.Body)
	}
}

func TestCallRegisterIdempotent(t *testing.T) {
	c := newCallEnv(t)
	body := map[string]any{"agent_id": c.agentA, "direction": "web"}
	first := c.do("POST", "/api/v1/calls", c.Owner.Token, body, "Idempotency-Key", "runtime-1")
	expect(t, first, 201)
	again := c.do("POST", "/api/v1/calls", c.Owner.Token, body, "Idempotency-Key", "runtime-1")
	expect(t, again, 201)
	if str(first.Data(), "id") != str(again.Data(), "id") {
		t.Errorf("replay registered another call: %s vs %s", first.Data()["id"], again.Data()["id"])
	}
	if got := listIDs(t, c.do("GET", "/api/v1/calls", c.Owner.Token, nil)); len(got) != 1 {
		t.Errorf("%d calls stored", len(got))
	}
	expectFields(t, c.do("POST", "/api/v1/calls", c.Owner.Token, map[string]any{"agent_id": c.agentB, "direction": "web"}, "Idempotency-Key", "runtime-1"), "Idempotency-Key")
}
