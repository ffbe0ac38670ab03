package storetest

import (
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchEventPageOfSomeKinds reads the first audit page (15) of a caller who reads some job
// kinds, among 20,040 events: the 20,000 newest are job.failed of a kind it may not read
// (an agent's test runs, of three agents), its own 40 (an embedding's failures, knowledge
// bases', api keys') the oldest. The scopes are what the service asks
// (visibility.eventScopes): "every_agent" those of a key with audit:read and
// knowledge_base:read (its types of any agent, job.failed of its two kinds), "agt_1" a
// member limited to agt_1 reading knowledge bases and agents, its kinds' failures of
// agt_1 and of no agent. "counted" is the walk before them, job.failed of every kind
// judged by Keep: it looked at service.MaxAuditScan of the hidden failures and answered
// an empty page with a cursor. A store with a Settle method is settled once the events
// are stored.
func BenchEventPageOfSomeKinds(b *testing.B, open Opener) {
	s := open(b)
	g := stepIDs()
	const hidden = 20000
	put := func(tx service.Tx, typ, agent, kind string) error {
		body := fmt.Sprintf(`{"id":"job_1","workspace_id":"ws_1","agent_id":%q,"kind":%q,"status":"failed"}`, agent, kind)
		e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: "ws_1", Type: typ, Data: []byte(body), Hash: "h", Actor: data.Actor{Type: "system"}}
		e.AgentID, e.Kind = service.EventAgent(e), service.EventKind(e)
		return tx.AppendEvent(e)
	}
	update(b, s, func(tx service.Tx) error {
		for i := range 40 {
			typ := []string{data.EventJobFailed, data.EventKnowledgeBaseCreated, data.EventAPIKeyCreated}[i%3]
			if err := put(tx, typ, "", service.JobKindEmbed); err != nil {
				return err
			}
		}
		return nil
	})
	for batch := 0; batch < hidden; batch += 1000 {
		update(b, s, func(tx service.Tx) error {
			for i := range 1000 {
				if err := put(tx, data.EventJobFailed, fmt.Sprintf("agt_%d", i%3), service.JobKindTestRun); err != nil {
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
	var every []service.EventScope
	for _, t := range []string{data.EventKnowledgeBaseCreated, data.EventKnowledgeBaseUpdated, data.EventAPIKeyCreated, data.EventUserLogin} {
		every = append(every, service.EventScope{Type: t, AnyAgent: true})
	}
	for _, k := range []string{service.JobKindEmbed, service.JobKindFetchURL} {
		every = append(every, service.EventScope{Type: data.EventJobFailed, Kind: k, AnyAgent: true})
	}
	run("every_agent", service.EventFilter{Key: "k", Keep: keep, MaxScan: service.MaxAuditScan, Scopes: every}, 15)
	one := []service.EventScope{{Type: data.EventKnowledgeBaseCreated}, {Agent: "agt_1", Type: data.EventAgentUpdated}}
	for _, k := range []string{service.JobKindEmbed, service.JobKindFetchURL} {
		one = append(one, service.EventScope{Type: data.EventJobFailed, Kind: k}, service.EventScope{Agent: "agt_1", Type: data.EventJobFailed, Kind: k})
	}
	run("agt_1", service.EventFilter{Key: "k", Keep: keep, MaxScan: service.MaxAuditScan, Scopes: one}, 15)
	run("counted", service.EventFilter{Key: "k", Keep: func(e *data.Event) bool { return service.EventKind(e) != service.JobKindTestRun },
		MaxScan: service.MaxAuditScan, Scopes: append(every[:4:4], service.EventScope{Type: data.EventJobFailed, AnyAgent: true})}, 0)
}
