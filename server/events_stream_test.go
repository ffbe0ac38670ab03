package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
)

// TestEventStreamResumesAfterAKilledConnection: a client reads part of a burst, its
// connection is killed mid-stream, more events happen while it is away, and it
// reconnects with the last id it received: it gets every event after that one, in the
// log's order, none twice, each as the webhook envelope of the audit log's event.
func TestEventStreamResumesAfterAKilledConnection(t *testing.T) {
	e := newStreamEnv(t, nil)
	before := e.newAgent("before the stream") // not sent: a new stream starts with what happens next
	c := e.openStream(e.Owner.Token, "")
	for i := range 5 {
		e.newAgent(fmt.Sprint("burst ", i))
	}
	var got []sseMessage
	got = append(got, c.next(), c.next())
	c.kill() // mid-stream: three events of the burst were sent or pending, not read
	for i := range 3 {
		e.newAgent(fmt.Sprint("while away ", i))
	}

	resumed := e.openStream(e.Owner.Token, "", "Last-Event-ID", got[1].id)
	for range 6 {
		got = append(got, resumed.next())
	}
	resumed.quiet(300 * time.Millisecond) // and nothing after them

	log := e.auditEvents(e.Owner.Token)
	var want []map[string]any
	for _, ev := range log {
		if ev["type"] == data.EventAgentCreated && !strings.Contains(fmt.Sprint(ev["data"]), before) {
			want = append(want, ev)
		}
	}
	if len(want) != 8 || len(got) != 8 {
		t.Fatalf("got %d messages, the log has %d agent.created events after the stream opened; want 8 of each", len(got), len(want))
	}
	for i, m := range got {
		w := want[i]
		if m.id != w["id"] || m.event != data.EventAgentCreated {
			t.Errorf("message %d: id %s event %s, want %s %s (the log's order, nothing missed or repeated)", i, m.id, m.event, w["id"], data.EventAgentCreated)
			continue
		}
		// The data is the webhook envelope: the audit event without its chain links.
		delete(w, "prev_hash")
		delete(w, "hash")
		var body map[string]any
		if err := json.Unmarshal([]byte(m.data), &body); err != nil {
			t.Fatalf("message %d data is not JSON: %v", i, err)
		}
		wb, _ := json.Marshal(w)
		gb, _ := json.Marshal(body)
		if string(wb) != string(gb) {
			t.Errorf("message %d data:\n%s\nwant the envelope of the audit log's event:\n%s", i, gb, wb)
		}
	}

	// last_event_id does the same for clients that cannot set the header; the header
	// wins when both are sent (an EventSource keeps its first URL when it reconnects).
	byQuery := e.openStream(e.Owner.Token, "last_event_id="+got[5].id)
	if m := byQuery.next(); m.id != got[6].id {
		t.Errorf("resumed by last_event_id after %s: first id %s, want %s", got[5].id, m.id, got[6].id)
	}
	both := e.openStream(e.Owner.Token, "last_event_id="+got[0].id, "Last-Event-ID", got[6].id)
	if m := both.next(); m.id != got[7].id {
		t.Errorf("header and query: first id %s, want %s (the header's position)", m.id, got[7].id)
	}
}

// TestEventStreamTypes: types= keeps the named types (comma-separated or repeated), and
// a resumed filtered stream still misses nothing of them.
func TestEventStreamTypes(t *testing.T) {
	e := newStreamEnv(t, nil)
	c := e.openStream(e.Owner.Token, "types=agent.deleted,number.created")
	repeated := e.openStream(e.Owner.Token, "types=agent.deleted&types=number.created")
	a := e.newAgent("a")
	e.do("PUT", "/api/v1/agents/"+a, e.Owner.Token, map[string]any{"name": "b"})
	expect(t, e.do("DELETE", "/api/v1/agents/"+a, e.Owner.Token, nil), 204)
	expect(t, e.do("POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550100", "provider": "twilio"}), 201)
	e.newAgent("c")
	for _, s := range []*sseClient{c, repeated} {
		first, second := s.next(), s.next()
		if first.event != data.EventAgentDeleted || second.event != data.EventNumberCreated {
			t.Errorf("filtered stream: %s then %s, want agent.deleted then number.created", first.event, second.event)
		}
		s.quiet(300 * time.Millisecond)
	}
	// Resumed from before the filtered events, it gets them and only them.
	all := e.auditEvents(e.Owner.Token)
	r := e.openStream(e.Owner.Token, "types=number.created&last_event_id="+all[0]["id"].(string))
	if m := r.next(); m.event != data.EventNumberCreated {
		t.Errorf("resumed filtered stream: %s, want number.created", m.event)
	}
	r.quiet(200 * time.Millisecond)
}

// TestEventStreamRefusals: bad input is 422 in the error shape naming the parameter,
// before any stream opens.
func TestEventStreamRefusals(t *testing.T) {
	e := newStreamEnv(t, nil)
	other := e.User(t, "other@example.com")
	otherToken := e.Token(t, other, "")
	e.do("POST", "/api/v1/agents", otherToken, map[string]any{"name": "theirs"})
	log := e.auditEvents(otherToken)
	theirs := log[len(log)-1]["id"].(string) // their newest event
	e.newAgent("mine")
	cases := []struct {
		name, query string
		headers     []string
		fields      []string
	}{
		{"an unknown type", "types=agent.created,agent.exploded", nil, []string{"types"}},
		{"a type of another letter case", "types=Agent.Created", nil, []string{"types"}},
		{"a very long unknown type", "types=" + strings.Repeat("x", 10000), nil, []string{"types"}},
		{"an id of no event", "", []string{"Last-Event-ID", "evt_01JD6Q3V9X8Y7Z6W5V4U3T2S1R"}, []string{"last_event_id"}},
		{"another workspace's event", "", []string{"Last-Event-ID", theirs}, []string{"last_event_id"}},
		{"not an event id", "last_event_id=" + url.QueryEscape("agt_../x"), nil, []string{"last_event_id"}},
		{"both faults at once", "types=nope&last_event_id=0", nil, []string{"types", "last_event_id"}},
	}
	for _, c := range cases {
		_, r := e.tryStream(e.Owner.Token, c.query, c.headers...)
		if r == nil {
			t.Errorf("%s: the stream opened, want 422", c.name)
			continue
		}
		expect(t, r, 422)
		expectFields(t, r, c.fields...)
	}
	// The other workspace's owner does resume from its own event.
	own := e.openStream(otherToken, "", "Last-Event-ID", theirs)
	own.quiet(100 * time.Millisecond)
}

// TestEventStreamResumeHidesWhatTheCallerCannotSee (issue 23): Last-Event-ID naming an
// event of the workspace the caller may not read (another agent's, for a member limited
// by agent_ids; a security event, for one who may not read the audit log) is answered
// exactly as an id of no event, so the stream reveals no event's existence; an event the
// caller sees resumes the stream. Accepted as a position, the hidden ids opened a stream.
func TestEventStreamResumeHidesWhatTheCallerCannotSee(t *testing.T) {
	e := newStreamEnv(t, nil)
	ws := e.Owner.WorkspaceID
	hidden, visible := e.newAgent("hidden"), e.newAgent("visible")
	u := e.User(t, "limited@example.com")
	owner := testkit.AsRole(&data.User{ID: e.Owner.ID}, ws, data.RoleOwner)
	if _, err := e.Svc.WorkspaceUsers.AddWorkspaceUser(owner, ws, data.WorkspaceUserAdd{ID: u.ID, Role: data.RoleDeveloper, AgentIDs: data.Some([]string{visible})}); err != nil {
		t.Fatal(err)
	}
	limited := e.Token(t, u, ws)
	ids := map[string]string{}
	for _, ev := range e.auditEvents(e.Owner.Token) {
		typ, body := ev["type"].(string), fmt.Sprint(ev["data"])
		switch {
		case typ == "agent.created" && strings.Contains(body, hidden):
			ids["another agent's event"] = ev["id"].(string)
		case typ == "agent.created" && strings.Contains(body, visible):
			ids["its agent's event"] = ev["id"].(string)
		case typ == "member.added":
			ids["a security event"] = ev["id"].(string)
		}
	}
	if len(ids) != 3 {
		t.Fatalf("events found: %v", ids)
	}
	_, unknown := e.tryStream(limited, "", "Last-Event-ID", "evt_01JD6Q3V9X8Y7Z6W5V4U3T2S1R")
	if unknown == nil {
		t.Fatal("an unknown Last-Event-ID opened the stream")
	}
	expect(t, unknown, 422)
	for _, name := range []string{"another agent's event", "a security event"} {
		for _, how := range [][]string{{"", "Last-Event-ID", ids[name]}, {"last_event_id=" + ids[name]}} {
			c, r := e.tryStream(limited, how[0], how[1:]...)
			if c != nil {
				c.kill()
				t.Errorf("%s as %v: the stream opened, want the answer to an unknown id", name, how)
				continue
			}
			if r.Status != unknown.Status || string(r.Body) != string(unknown.Body) {
				t.Errorf("%s as %v: %d %s, want as for an unknown id: %d %s", name, how, r.Status, r.Body, unknown.Status, unknown.Body)
			}
		}
	}
	c := e.openStream(limited, "", "Last-Event-ID", ids["its agent's event"])
	c.quiet(100 * time.Millisecond)
}

// TestEventStreamAccess: the stream is open to every member of the workspace (a key with
// scopes needs audit:read), carries each reader the events it may read (an agent's to
// whoever reads agents; a security event to those who read the audit log), is read in the
// token's workspace only, and stops as soon as the token may no longer read it.
func TestEventStreamAccess(t *testing.T) {
	e := newStreamEnv(t, nil)
	admin := streamMember(t, e, "admin@example.com", data.RoleAdmin)
	checkStreamRefusals(t, e)
	auditKey, streams, securityOnly := openReaderStreams(t, e, admin)
	checkOtherWorkspaceUnseen(t, e, streams)
	checkRevokedKeyStreamEnds(t, e, auditKey, streams["audit:read key"])
	checkEventsAfterRevocation(t, streams, securityOnly)
}

// streamMember adds a user of role to the owner's workspace and returns a token of
// theirs there.
func streamMember(t *testing.T, e *streamEnv, email, role string) string {
	t.Helper()
	ws := e.Owner.WorkspaceID
	u := e.User(t, email)
	owner := testkit.AsRole(&data.User{ID: e.Owner.ID}, ws, data.RoleOwner)
	if _, err := e.Svc.WorkspaceUsers.AddWorkspaceUser(owner, ws, data.WorkspaceUserAdd{ID: u.ID, Role: role}); err != nil {
		t.Fatal(err)
	}
	return e.Token(t, u, ws)
}

// streamKey creates an owner's API key with scopes and returns its token.
func streamKey(t *testing.T, e *streamEnv, scopes ...string) string {
	t.Helper()
	r := e.do("POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "scoped", "scopes": scopes})
	expect(t, r, 201)
	return r.JSON()["token"].(string)
}

// checkStreamRefusals checks the stream refuses no token, a wrong one, and keys without
// audit:read.
func checkStreamRefusals(t *testing.T, e *streamEnv) {
	t.Helper()
	for _, c := range []struct {
		name, token string
		status      int
	}{
		{"no token", "", 401},
		{"a wrong token", "1|nope", 401},
		{"key with webhooks:read", streamKey(t, e, data.ScopeWebhooksRead), 403},
		{"key with call_history:read", streamKey(t, e, data.ReadScope(data.ModuleCallHistory)), 403},
	} {
		_, r := e.tryStream(c.token, "")
		if r == nil {
			t.Errorf("%s: the stream opened, want %d", c.name, c.status)
			continue
		}
		expect(t, r, c.status)
	}
}

// openReaderStreams opens a stream for each reader: the owner, an admin, a key with
// audit:read and agents:read, a member and a developer; and one for a key with audit:read
// alone. It returns the first key with the streams.
func openReaderStreams(t *testing.T, e *streamEnv, admin string) (auditKey string, streams map[string]*sseClient, securityOnly *sseClient) {
	t.Helper()
	auditKey = streamKey(t, e, data.ScopeAuditRead, data.ReadScope(data.ModuleAgents))
	memberToken, devToken, auditOnlyKey := streamMember(t, e, "member@example.com", data.RoleMember), streamMember(t, e, "dev@example.com", data.RoleDeveloper), streamKey(t, e, data.ScopeAuditRead)
	streams = map[string]*sseClient{"owner": e.openStream(e.Owner.Token, ""), "admin": e.openStream(admin, ""), "audit:read key": e.openStream(auditKey, ""),
		"member": e.openStream(memberToken, ""), "developer": e.openStream(devToken, "")}
	securityOnly = e.openStream(auditOnlyKey, "")
	return auditKey, streams, securityOnly
}

// checkOtherWorkspaceUnseen checks another workspace's events never reach this
// workspace's streams.
func checkOtherWorkspaceUnseen(t *testing.T, e *streamEnv, streams map[string]*sseClient) {
	t.Helper()
	other := e.User(t, "other@example.com")
	e.do("POST", "/api/v1/agents", e.Token(t, other, ""), map[string]any{"name": "theirs"})
	id := e.newAgent("ours")
	for name, s := range streams {
		m := s.next()
		if m.event != data.EventAgentCreated || !strings.Contains(m.data, id) {
			t.Errorf("%s: first event %s %s, want this workspace's agent %s", name, m.event, m.data, id)
		}
	}
}

// checkRevokedKeyStreamEnds revokes auditKey and checks its stream s ends before the
// next event reaches it.
func checkRevokedKeyStreamEnds(t *testing.T, e *streamEnv, auditKey string, s *sseClient) {
	t.Helper()
	keys := e.do("GET", "/api/v1/api-keys?per_page=100", e.Owner.Token, nil).List()
	for _, k := range keys {
		if k := k.(map[string]any); strings.HasPrefix(auditKey, fmt.Sprint(k["id"])+"|") {
			expect(t, e.do("DELETE", fmt.Sprint("/api/v1/api-keys/", k["id"]), e.Owner.Token, nil), 204)
		}
	}
	e.newAgent("after the revocation")
	for {
		m, ok := <-s.msgs
		if !ok {
			break
		}
		if m.comment == "" {
			t.Fatalf("the revoked key's stream received %s %s", m.event, m.id)
		}
	}
}

// checkEventsAfterRevocation checks the owner reads the revocation; a key with
// audit:read alone reads the security events, not the agents; members read the agents,
// not the security events.
func checkEventsAfterRevocation(t *testing.T, streams map[string]*sseClient, securityOnly *sseClient) {
	t.Helper()
	if m := streams["owner"].next(); m.event != data.EventAPIKeyRevoked {
		t.Errorf("the owner's stream: %s, want the revocation", m.event)
	}
	if m := securityOnly.next(); m.event != data.EventAPIKeyRevoked {
		t.Errorf("the audit:read key's stream: first event %s %s, want the revocation", m.event, m.data)
	}
	for _, name := range []string{"member", "developer"} {
		if m := streams[name].next(); !strings.Contains(m.data, "after the revocation") {
			t.Errorf("%s's stream: %s %s, want the agent made after the revocation", name, m.event, m.data)
		}
	}
	if m := streams["owner"].next(); !strings.Contains(m.data, "after the revocation") {
		t.Errorf("the owner's stream: %s, want the agent made after the revocation", m.data)
	}
}

// TestEventStreamCap: a token holds at most MaxStreamsPerToken streams; one more is 429
// with Retry-After in the error shape; closing one frees its place; another token is not
// affected.
func TestEventStreamCap(t *testing.T) {
	e := newStreamEnv(t, nil)
	var open []*sseClient
	for range server.MaxStreamsPerToken {
		open = append(open, e.openStream(e.Owner.Token, ""))
	}
	_, r := e.tryStream(e.Owner.Token, "")
	if r == nil {
		t.Fatalf("stream %d opened, want 429", server.MaxStreamsPerToken+1)
	}
	expect(t, r, 429)
	if r.Header.Get("Retry-After") == "" || r.JSON()["code"] != data.ERATELIMITED {
		t.Errorf("429 without Retry-After or rate_limited: %v %s", r.Header, r.Body)
	}
	other := e.openStream(e.Token(t, e.User(t, "u2@example.com"), ""), "")
	other.quiet(10 * time.Millisecond)

	open[0].kill()
	deadline := time.Now().Add(30 * time.Second) // the server sees the close; a hang guard
	for {
		c, r := e.tryStream(e.Owner.Token, "")
		if c != nil {
			break
		}
		if r.Status != 429 || time.Now().After(deadline) {
			t.Fatalf("after closing a stream: %d %s, want a place to open again", r.Status, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEventStreamHeartbeat: an idle stream sends a comment line at the interval.
func TestEventStreamHeartbeat(t *testing.T) {
	e := newStreamEnv(t, func(c *server.Config) { c.Stream.Heartbeat = 50 * time.Millisecond })
	c := e.openStream(e.Owner.Token, "")
	beats := 0
	for beats < 3 {
		m := c.nextAny()
		if m.comment == "" {
			t.Fatalf("an event on an idle stream: %+v", m)
		}
		if m.comment == "heartbeat" {
			beats++
		}
	}
}

// TestEventStreamOutlivesServerTimeouts: the server cuts ordinary requests at its read
// and write timeouts; the stream is exempt (it lifts its read deadline and moves its
// write deadline with each write), so it still delivers long after both have passed.
//
// The event is stored directly, not made through the API: an ordinary request of its own
// under these timeouts could be cut on a loaded machine, which is not what is tested. The
// timeouts are a second, not less, since each of the stream's writes must also go out
// within one; the sleep is a lower bound on the time that passes.
func TestEventStreamOutlivesServerTimeouts(t *testing.T) {
	const timeout = time.Second
	e := newStreamEnv(t, func(c *server.Config) {
		c.Timeouts = server.Timeouts{ReadHeader: timeout, Read: timeout, Write: timeout, Idle: timeout}
		c.Stream.Heartbeat = timeout / 3
	})
	c := e.openStream(e.Owner.Token, "")
	time.Sleep(2 * timeout)
	id := e.appendEvent(e.Owner.WorkspaceID, data.EventCallStarted, []byte(`{"id":"call_late"}`))
	if m := c.next(); m.id != id {
		t.Errorf("after the timeouts: event %s, want %s", m.id, id)
	}
}

// TestEventStreamPollsForEventsOfOtherProcesses: an event committed where this server's
// hook does not see it (another replica, an admin command) reaches the stream by the
// poll.
func TestEventStreamPollsForEventsOfOtherProcesses(t *testing.T) {
	e := newStreamEnv(t, func(c *server.Config) { c.Stream.Poll = 50 * time.Millisecond })
	e.Store.SetEventHook(nil) // as if the event came from elsewhere
	c := e.openStream(e.Owner.Token, "")
	id := e.appendEvent(e.Owner.WorkspaceID, data.EventCallStarted, []byte(`{"id":"call_x"}`))
	if m := c.next(); m.id != id {
		t.Errorf("polled event %s, want %s", m.id, id)
	}
}

// TestEventStreamEndsWithItsWorkspace: when the workspace goes, its streams end.
func TestEventStreamEndsWithItsWorkspace(t *testing.T) {
	e := newStreamEnv(t, nil)
	r := e.do("POST", "/api/v1/workspaces", e.Owner.Token, map[string]any{"name": "short-lived"})
	expect(t, r, 201)
	ws := r.Data()["id"].(string)
	owned := testkit.APIKey(t, e.Svc, e.Owner.ID, ws)
	e.do("POST", "/api/v1/agents", owned, map[string]any{"name": "a"})
	c := e.openStream(owned, "last_event_id="+e.auditEvents(owned)[0]["id"].(string))
	c.next()
	expect(t, e.do("DELETE", "/api/v1/workspaces/"+ws, e.Owner.Token, nil), 204)
	c.waitEnd(30 * time.Second)
}
