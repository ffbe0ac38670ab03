package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"event_pages_of_some_types", testEventPagesOfSomeTypes})
}

// testEventPagesOfSomeTypes: a page of a caller who sees every agent but not every type
// (EventFilter.Scopes of any agent: service.visibility.eventScopes) walks only the events
// of its types, whatever their agent. Three times the scan bound of events of a type it
// may not read, recorded after its own (and by the same user): a caller without
// call_history behind call events, a key without audit:read behind security events. Its
// events, of every agent and of none, come on the first page without a cursor, with an
// actor filter too; job.failed is walked and Keep decides each. Before, the walk counted
// the hidden events and answered an empty page with a next_cursor: how many events of
// types it may not read there are.
func testEventPagesOfSomeTypes(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	const maxScan = 20
	hidden := map[string][]string{"ws_y1": {data.EventCallEnded, data.EventCallStarted}, "ws_y2": {data.EventUserLogin, data.EventAPIKeyCreated}}
	want, byQuiet, mixed := map[string][]string{}, map[string][]string{}, []string{}
	visible := map[string]bool{}
	add := func(tx service.Tx, ws, typ, agent, user string) (string, error) {
		body := fmt.Sprintf(`{"agent_id":%q}`, agent)
		e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: ws, Type: typ, Data: []byte(body), Hash: "h",
			Actor: data.Actor{Type: "user", UserID: user}, AgentID: agent}
		return e.ID, tx.AppendEvent(e)
	}
	update(t, s, func(tx service.Tx) error {
		for _, ws := range []string{"ws_y1", "ws_y2"} {
			for i, c := range []struct {
				typ, agent, user string
				keep             bool
			}{
				{data.EventAgentUpdated, "agt_1", "usr_busy", true}, {data.EventKnowledgeBaseCreated, "", "usr_quiet", true},
				{data.EventJobFailed, "agt_2", "usr_quiet", true}, {data.EventAgentTestCreated, "agt_2", "usr_busy", true},
				{data.EventJobFailed, "agt_1", "usr_quiet", false}, {data.EventAgentUpdated, "", "usr_quiet", true},
			} {
				id, err := add(tx, ws, c.typ, c.agent, c.user)
				if err != nil {
					return err
				}
				// Another workspace's events of the hidden types lie between.
				if _, err := add(tx, "ws_y3", hidden[ws][i%2], c.agent, c.user); err != nil {
					return err
				}
				if !c.keep {
					continue // a job.failed whose job the caller may not read: Keep's to refuse
				}
				visible[id], want[ws] = true, append([]string{id}, want[ws]...)
				if c.user == "usr_quiet" {
					byQuiet[ws] = append([]string{id}, byQuiet[ws]...)
				}
				if ws == "ws_y1" && (c.typ == data.EventAgentUpdated || c.typ == data.EventAgentTestCreated) {
					mixed = append([]string{id}, mixed...)
				}
			}
			for i := range 3 * maxScan {
				agent := []string{"agt_1", "agt_2", ""}[i%3]
				if ws == "ws_y2" {
					agent = "" // a security event is about no agent
				}
				if _, err := add(tx, ws, hidden[ws][i%2], agent, "usr_quiet"); err != nil {
					return err
				}
			}
		}
		return nil
	})
	readable := func(ws string) []service.EventScope {
		out := []service.EventScope{}
		for _, typ := range data.EventTypes {
			if !slices.Contains(hidden[ws], typ) {
				out = append(out, service.EventScope{Type: typ, AnyAgent: true})
			}
		}
		return out
	}
	filter := func(ws, actor string) service.EventFilter {
		return service.EventFilter{Key: ws + actor, Actor: actor, MaxScan: maxScan, Scopes: readable(ws), Keep: func(e *data.Event) bool {
			return visible[e.ID] && (actor == "" || e.Actor.UserID == actor)
		}}
	}
	cases := []struct {
		name, ws string
		f        service.EventFilter
		want     []string
	}{
		{"no call_history", "ws_y1", filter("ws_y1", ""), want["ws_y1"]},
		{"no call_history, an actor filter", "ws_y1", filter("ws_y1", "usr_quiet"), byQuiet["ws_y1"]},
		{"no audit:read", "ws_y2", filter("ws_y2", ""), want["ws_y2"]},
		{"no audit:read, an actor filter", "ws_y2", filter("ws_y2", "usr_quiet"), byQuiet["ws_y2"]},
		// Storage takes scopes of any agent and pairs of one agent in one list.
		{"a type of any agent and a pair", "ws_y1", service.EventFilter{Key: "mixed", MaxScan: maxScan, Keep: func(e *data.Event) bool { return visible[e.ID] },
			Scopes: []service.EventScope{{Type: data.EventAgentUpdated, AnyAgent: true}, {Agent: "agt_2", Type: data.EventAgentTestCreated},
				{Agent: "agt_1", Type: data.EventAgentTestCreated}, {Agent: "agt_1", Type: data.EventCallEnded}}}, mixed},
	}
	view(t, s, func(tx service.Tx) error {
		for _, c := range cases {
			list, page, err := tx.EventPage(c.ws, c.f, data.PageRequest{PerPage: 10})
			if err != nil || !slices.Equal(eventIDs(list), c.want) || page.NextCursor != nil || page.PrevCursor != nil {
				t.Errorf("%s: %v, next %v, %v; want %v in one page, no cursor", c.name, eventIDs(list), page.NextCursor != nil, err, c.want)
			}
		}
		return nil
	})
	for _, c := range cases {
		for _, per := range []int{1, 2} {
			checkPages(t, s, c.name, per, func(tx service.Tx, req data.PageRequest) ([]string, data.Page, error) {
				list, p, err := tx.EventPage(c.ws, c.f, req)
				return eventIDs(list), p, err
			}, c.want)
		}
	}
}
