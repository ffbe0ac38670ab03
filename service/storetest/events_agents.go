package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"event_pages_of_some_agents", testEventPagesOfSomeAgents})
}

// testEventPagesOfSomeAgents: a page of a caller limited to some agents
// (EventFilter.Scopes: the audit log's, service.visibility.eventScopes) walks only the
// events of its (agent, type) pairs. Three times the scan bound of another agent's events
// recorded after the caller's own (and by the same user) neither hide them nor shape the
// page: its events, and those about no agent of a type it reads, come on the first page
// without a cursor, with a type filter and with an actor filter too. Before, the walk
// counted the other agent's events and answered an empty page with a next_cursor: how
// many events of agents it may not see there are.
func testEventPagesOfSomeAgents(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	const maxScan = 20
	var mine, mineCalls, byQuiet []string
	visible := map[string]bool{}
	add := func(tx service.Tx, ws, typ, agent, user string) (string, error) {
		body := fmt.Sprintf(`{"agent_id":%q}`, agent)
		if typ == data.EventAgentUpdated {
			body = fmt.Sprintf(`{"id":%q}`, agent)
		}
		e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: ws, Type: typ, Data: []byte(body), Hash: "h",
			Actor: data.Actor{Type: "user", UserID: user}, AgentID: agent}
		return e.ID, tx.AppendEvent(e)
	}
	update(t, s, func(tx service.Tx) error {
		for _, c := range []struct{ typ, agent, user string }{
			{data.EventAgentUpdated, "agt_mine", "usr_busy"}, {data.EventCallEnded, "agt_mine", "usr_quiet"},
			{data.EventKnowledgeBaseCreated, "", "usr_quiet"}, {data.EventCallEnded, "agt_mine", "usr_busy"},
			{data.EventAgentUpdated, "agt_mine", "usr_quiet"},
		} {
			id, err := add(tx, "ws_g1", c.typ, c.agent, c.user)
			if err != nil {
				return err
			}
			visible[id], mine = true, append([]string{id}, mine...)
			if c.typ == data.EventCallEnded {
				mineCalls = append([]string{id}, mineCalls...)
			}
			if c.user == "usr_quiet" {
				byQuiet = append([]string{id}, byQuiet...)
			}
			// The other workspace's events of the same agent and types lie between.
			if _, err := add(tx, "ws_g2", c.typ, c.agent, c.user); err != nil {
				return err
			}
		}
		for i := range 3 * maxScan {
			typ := []string{data.EventCallEnded, data.EventAgentUpdated, data.EventJobFailed}[i%3]
			if _, err := add(tx, "ws_g1", typ, "agt_other", "usr_quiet"); err != nil {
				return err
			}
		}
		// An agent's event naming no agent is another's for a caller limited to some.
		_, err := add(tx, "ws_g1", data.EventCallEnded, "", "usr_quiet")
		return err
	})
	scopes := func(types ...string) []service.EventScope {
		out := []service.EventScope{}
		for _, typ := range types {
			agent := "agt_mine"
			if typ == data.EventKnowledgeBaseCreated {
				agent = ""
			}
			out = append(out, service.EventScope{Agent: agent, Type: typ})
		}
		return out
	}
	all := scopes(data.EventAgentUpdated, data.EventCallEnded, data.EventKnowledgeBaseCreated, data.EventJobFailed)
	filter := func(key, typ, actor string, sc []service.EventScope) service.EventFilter {
		return service.EventFilter{Key: key, Type: typ, Actor: actor, MaxScan: maxScan, Scopes: sc, Keep: func(e *data.Event) bool {
			return visible[e.ID] && (typ == "" || e.Type == typ) && (actor == "" || e.Actor.UserID == actor)
		}}
	}
	cases := []struct {
		name string
		f    service.EventFilter
		want []string
	}{
		{"no filter", filter("all", "", "", all), mine},
		{"a type filter", filter("calls", data.EventCallEnded, "", scopes(data.EventCallEnded)), mineCalls},
		{"an actor filter", filter("quiet", "", "usr_quiet", all), byQuiet},
		{"no pair", filter("none", "", "", []service.EventScope{}), nil},
	}
	view(t, s, func(tx service.Tx) error {
		for _, c := range cases {
			list, page, err := tx.EventPage("ws_g1", c.f, data.PageRequest{PerPage: 10})
			if err != nil || !slices.Equal(eventIDs(list), c.want) || page.NextCursor != nil || page.PrevCursor != nil {
				t.Errorf("%s: %v, next %v, %v; want %v in one page, no cursor", c.name, eventIDs(list), page.NextCursor != nil, err, c.want)
			}
		}
		return nil
	})
	for _, c := range cases[:3] {
		for _, per := range []int{1, 2} {
			checkPages(t, s, c.name, per, func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
				list, p, err := tx.EventPage("ws_g1", c.f, req)
				return eventIDs(list), p, err
			}, c.want)
		}
	}
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace("ws_g1") })
	view(t, s, func(tx service.Tx) error {
		if list, _, err := tx.EventPage("ws_g1", cases[0].f, data.PageRequest{PerPage: 10}); err != nil || len(list) != 0 {
			t.Errorf("a deleted workspace's page: %v, %v", eventIDs(list), err)
		}
		f := cases[0].f
		f.Keep = nil
		if list, _, err := tx.EventPage("ws_g2", f, data.PageRequest{PerPage: 10}); err != nil || len(list) != len(mine) {
			t.Errorf("another workspace's page after a delete: %v, %v; want %d events", eventIDs(list), err, len(mine))
		}
		return nil
	})
}
