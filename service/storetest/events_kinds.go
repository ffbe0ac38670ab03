package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"event_pages_of_some_kinds", testEventPagesOfSomeKinds})
}

// testEventPagesOfSomeKinds: a page of a caller who reads some job kinds (EventScope.Kind:
// service.visibility.jobScopes) walks only the job.failed events of those kinds. Three
// times the scan bound of job.failed events of a kind it may not read, of its agents and
// of none, recorded after its own: its events, of every agent and of none, come on the
// first page without a cursor, for a caller who sees every agent (scopes of any agent) and
// one limited to an agent (pairs) alike. Before, the walk counted the hidden kind's
// failures and answered an empty page with a next_cursor: how many there are. A pair
// without a kind is the events without one; a type of any agent without a kind, every
// kind's.
func testEventPagesOfSomeKinds(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	const maxScan = 20
	visible := map[string]bool{}
	var everyAgent, oneAgent, anyKind, noKind []string
	add := func(tx service.Tx, ws, typ, agent, kind string) (string, error) {
		e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: ws, Type: typ, Data: []byte(fmt.Sprintf(`{"agent_id":%q,"kind":%q}`, agent, kind)),
			Hash: "h", Actor: data.Actor{Type: "system"}, AgentID: agent, Kind: kind}
		return e.ID, tx.AppendEvent(e)
	}
	update(t, s, func(tx service.Tx) error {
		for _, c := range []struct{ typ, agent, kind string }{
			{data.EventJobFailed, "agt_1", "run"}, {data.EventAgentUpdated, "agt_1", ""}, {data.EventJobFailed, "", "embed"},
			{data.EventJobFailed, "agt_2", "run"}, {data.EventJobFailed, "agt_1", "embed"}, {data.EventAgentUpdated, "agt_2", ""},
		} {
			id, err := add(tx, "ws_k1", c.typ, c.agent, c.kind)
			if err != nil {
				return err
			}
			visible[id], everyAgent = true, append([]string{id}, everyAgent...)
			if c.agent == "agt_1" || c.agent == "" {
				oneAgent = append([]string{id}, oneAgent...)
			}
			// Another workspace's failures of the kinds read lie between.
			if _, err := add(tx, "ws_k2", data.EventJobFailed, c.agent, "run"); err != nil {
				return err
			}
			// Pairs and a type without a kind, in a workspace of few events.
			kind := []string{"run", "dial", ""}[len(anyKind)%3]
			id, err = add(tx, "ws_k3", data.EventJobFailed, "agt_1", kind)
			if err != nil {
				return err
			}
			visible[id], anyKind = true, append([]string{id}, anyKind...)
			if kind == "" {
				noKind = append([]string{id}, noKind...)
			}
		}
		for i := range 3 * maxScan {
			if _, err := add(tx, "ws_k1", data.EventJobFailed, []string{"agt_1", "agt_2", ""}[i%3], "dial"); err != nil {
				return err
			}
		}
		return nil
	})
	keep := func(e *data.Event) bool { return visible[e.ID] }
	f := func(key string, scopes ...service.EventScope) service.EventFilter {
		return service.EventFilter{Key: key, MaxScan: maxScan, Keep: keep, Scopes: scopes}
	}
	failed, updated := data.EventJobFailed, data.EventAgentUpdated
	cases := []struct {
		name, ws string
		f        service.EventFilter
		want     []string
	}{
		{"every agent, kinds run and embed", "ws_k1", f("any", service.EventScope{Type: updated, AnyAgent: true},
			service.EventScope{Type: failed, Kind: "run", AnyAgent: true}, service.EventScope{Type: failed, Kind: "embed", AnyAgent: true}), everyAgent},
		{"agt_1, kinds run and embed", "ws_k1", f("one", service.EventScope{Agent: "agt_1", Type: updated},
			service.EventScope{Agent: "agt_1", Type: failed, Kind: "run"}, service.EventScope{Agent: "agt_1", Type: failed, Kind: "embed"},
			service.EventScope{Type: failed, Kind: "embed"}), oneAgent},
		{"a pair without a kind", "ws_k3", f("none", service.EventScope{Agent: "agt_1", Type: failed}), noKind},
		{"a type without a kind", "ws_k3", f("all", service.EventScope{Type: failed, AnyAgent: true}), anyKind},
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
