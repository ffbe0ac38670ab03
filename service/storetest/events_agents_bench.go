package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchEventPageOfSomeAgents reads the first audit page (15) of a caller limited to k
// agents (1, 5, 20) among 20,000 events: the 20,000 newest are another agent's, its own
// agents' 40 the oldest. The pairs are what the service asks for a member holding every
// module (about 30 types an agent, and those about no agent): "scopes_<k>" walks them
// (events_by_facet, events_by_agent) and finds its 15 events; "counted_1" is the walk
// before them, which looked at service.MaxAuditScan of the other agent's events and
// answered an empty page with a cursor. A store with a Settle method is settled once the
// events are stored.
func BenchEventPageOfSomeAgents(b *testing.B, open Opener) {
	s := open(b)
	g := stepIDs()
	const others = 20000
	own := make([]string, 20)
	for i := range own {
		own[i] = fmt.Sprintf("agt_m%02d", i)
	}
	put := func(tx service.Tx, typ, agent string) error {
		body := fmt.Sprintf(`{"id":"x","agent_id":%q,"name":"n"}`, agent)
		if strings.HasPrefix(typ, "agent.") && typ != data.EventAgentVersionDeleted && typ != data.EventAgentPublishedUntested && !strings.HasPrefix(typ, "agent.rollout") {
			body = fmt.Sprintf(`{"id":%q,"name":"n"}`, agent)
		}
		e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: "ws_1", Type: typ, Data: []byte(body), Hash: "h", Actor: data.Actor{Type: "system"}}
		e.AgentID = service.EventAgent(e)
		return tx.AppendEvent(e)
	}
	update(b, s, func(tx service.Tx) error {
		for i := range 40 {
			if err := put(tx, []string{data.EventAgentUpdated, data.EventCallEnded}[i%2], own[i%len(own)]); err != nil {
				return err
			}
		}
		return nil
	})
	for batch := 0; batch < others; batch += 1000 {
		update(b, s, func(tx service.Tx) error {
			for i := range 1000 {
				if err := put(tx, []string{data.EventCallEnded, data.EventCallStarted, data.EventAgentUpdated}[i%3], "agt_other"); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if settle, ok := s.(interface{ Settle(testing.TB) }); ok {
		settle.Settle(b)
	}
	keep := func(*data.Event) bool { return true }
	mine := map[string]bool{}
	for _, a := range own {
		mine[a] = true
	}
	run := func(name string, f service.EventFilter, want int) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				view(b, s, func(tx service.Tx) error {
					list, page, err := tx.EventPage("ws_1", f, data.PageRequest{PerPage: 15})
					if err != nil || len(list) != want || want == 0 && page.NextCursor == nil {
						b.Fatalf("%s: %d events, next %v, %v; want %d", name, len(list), page.NextCursor != nil, err, want)
					}
					return nil
				})
			}
		})
	}
	for _, k := range []int{1, 5, 20} {
		sc := benchAgentScopes(own[:k])
		want := min(15, 40*k/len(own))
		run(fmt.Sprintf("scopes_%d_agents_%d_pairs", k, len(sc)), service.EventFilter{Key: "k", Keep: keep, MaxScan: service.MaxAuditScan, Scopes: sc}, want)
	}
	counted := func(e *data.Event) bool { return mine[service.EventAgent(e)] }
	run("counted_1", service.EventFilter{Key: "k", Keep: counted, MaxScan: service.MaxAuditScan}, 0)
}

// benchAgentScopes are the pairs the service gives a member of agents holding every
// module (visibility.eventScopes): each agent's events of every type that names an agent,
// and knowledge bases', numbers' and job.failed's about no agent.
func benchAgentScopes(agents []string) []service.EventScope {
	probe := []byte(`{"id":"a","agent_id":"a"}`)
	var out []service.EventScope
	for _, t := range data.EventTypes {
		if service.EventAgent(&data.Event{Type: t, Data: probe}) != "" {
			for _, a := range agents {
				out = append(out, service.EventScope{Agent: a, Type: t})
			}
			if t == data.EventJobFailed {
				out = append(out, service.EventScope{Type: t})
			}
		} else if strings.HasPrefix(t, "knowledge_") || strings.HasPrefix(t, "number.") {
			out = append(out, service.EventScope{Type: t})
		}
	}
	return out
}
