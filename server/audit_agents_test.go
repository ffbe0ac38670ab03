package server_test

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// The audit log of an API key limited by agent_ids (conventions §6: a limit holds on
// every channel) reads only the events of its agents and those about no agent it may
// read. More than service.MaxAuditScan events of another agent, newer than its own and by
// the same user, neither hide its events nor shape its page: they come on the first page
// with no next_cursor, with no filter, a type filter and an actor filter alike. Before,
// the page was empty with a next_cursor: how many events of the other agent there are.
func TestAuditLogOfSomeAgentsReadsOnlyTheirs(t *testing.T) {
	e := newEnv(t)
	mine := e.do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Mine"})
	expect(t, mine, 201)
	other := e.do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Other"})
	expect(t, other, 201)
	kb := e.do("POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": "Manuals"})
	expect(t, kb, 201)
	mineID, otherID := mine.Data()["id"].(string), other.Data()["id"].(string)
	key := e.do("POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "limited", "agent_ids": []string{mineID}})
	expect(t, key, 201)
	token := key.JSON()["token"].(string)

	// The other agent's events, as the service records them (service.EventAgent), newer
	// than everything above: written straight to the store, as many as a long log holds.
	appendNewerEvents(t, e, service.MaxAuditScan+10, data.EventAgentCreated, `{"id":"`+otherID+`","name":"Other"}`)
	types := func(r *response) []string {
		var out []string
		for _, item := range r.List() {
			ev := item.(map[string]any)
			out = append(out, ev["type"].(string))
			if d, _ := ev["data"].(map[string]any); d != nil && (d["id"] == otherID || d["agent_id"] == otherID) {
				t.Errorf("the limited key reads an event of the other agent: %v", ev)
			}
		}
		return out
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{data.EventKnowledgeBaseCreated, data.EventAgentCreated}},
		{"type=" + data.EventAgentCreated, []string{data.EventAgentCreated}},
		{"actor=" + url.QueryEscape(e.Owner.ID), []string{data.EventKnowledgeBaseCreated, data.EventAgentCreated}},
	} {
		r := e.do("GET", "/api/v1/audit-log?per_page=50&"+c.query, token, nil)
		expect(t, r, 200)
		if got := types(r); !slices.Equal(got, c.want) || r.Meta()["next_cursor"] != nil {
			t.Errorf("?%s: %v, next_cursor %v; want %v on the first page, no next_cursor", c.query, got, r.Meta()["next_cursor"], c.want)
		}
	}
	// The owner, who sees every agent, pages through the long log as before.
	r := e.do("GET", "/api/v1/audit-log?per_page=50", e.Owner.Token, nil)
	expect(t, r, 200)
	if len(r.List()) != 50 || r.Meta()["next_cursor"] == nil {
		t.Errorf("the owner's first page: %d events, next_cursor %v; want 50 and a cursor", len(r.List()), r.Meta()["next_cursor"])
	}
}

// appendNewerEvents writes n events of type typ with payload body, caused by the owner and
// newer than everything before, straight to the store as the service records them (each
// given its agent and kind by service.EventAgent and service.EventKind): as many as a
// long log holds, quickly.
func appendNewerEvents(t *testing.T, e *env, n int, typ, body string) {
	t.Helper()
	at := time.Now().UTC().Add(time.Hour)
	g := data.NewIDGen()
	g.Now = func() time.Time { at = at.Add(time.Millisecond); return at }
	if err := e.DB.Update(context.Background(), func(tx service.Tx) error {
		for range n {
			ev := &data.Event{ID: g.New(data.PrefixEvent), Type: typ, CreatedAt: data.NewTime(at), WorkspaceID: e.Owner.WorkspaceID,
				Actor: data.Actor{Type: "user", UserID: e.Owner.ID}, Data: []byte(body), Hash: "k1:x"}
			ev.AgentID, ev.Kind = service.EventAgent(ev), service.EventKind(ev)
			if err := tx.AppendEvent(ev); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
