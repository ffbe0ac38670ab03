package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchEventPageOfSomeTypes reads the first audit page (15) of a caller who sees every
// agent but not every type, among 20,040 events: the 20,000 newest are call events of
// three agents, its own 40 (agents', knowledge bases', logins') the oldest. The scopes are
// what the service asks (visibility.eventScopes, every type's events whatever their
// agent): "no_call_history" holds every type but the calls' and campaigns' (a key with
// audit:read and every other module's scope), "audit_only" 7 security types, its logins'
// among them (a key with audit:read alone walks 21). "counted" is the walk before them,
// which looked at service.MaxAuditScan of the call events and answered an empty page
// with a cursor. A store with a Settle method is settled once the events are stored.
func BenchEventPageOfSomeTypes(b *testing.B, open Opener) {
	s := open(b)
	g := stepIDs()
	const calls = 20000
	put := func(tx service.Tx, typ, agent string) error {
		e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: "ws_1", Type: typ, Data: []byte(fmt.Sprintf(`{"id":"x","agent_id":%q}`, agent)),
			Hash: "h", Actor: data.Actor{Type: "system"}}
		e.AgentID = service.EventAgent(e)
		return tx.AppendEvent(e)
	}
	update(b, s, func(tx service.Tx) error {
		for i := range 40 {
			if err := put(tx, []string{data.EventAgentTestCreated, data.EventKnowledgeBaseCreated, data.EventUserLogin}[i%3], fmt.Sprintf("agt_%d", i%3)); err != nil {
				return err
			}
		}
		return nil
	})
	for batch := 0; batch < calls; batch += 1000 {
		update(b, s, func(tx service.Tx) error {
			for i := range 1000 {
				if err := put(tx, []string{data.EventCallEnded, data.EventCallStarted, data.EventCallRegistered}[i%3], fmt.Sprintf("agt_%d", i%3)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if settle, ok := s.(interface{ Settle(testing.TB) }); ok {
		settle.Settle(b)
	}
	callHistory := func(t string) bool { return strings.HasPrefix(t, "call.") || strings.HasPrefix(t, "campaign.") }
	security := map[string]bool{data.EventUserLogin: true, data.EventUserLoginFailed: true, data.EventAPIKeyCreated: true, data.EventAPIKeyRevoked: true,
		data.EventWorkspaceUpdated: true, data.EventWebhookCreated: true, data.EventWebhookDeleted: true}
	scopes := func(reads func(string) bool) []service.EventScope {
		var out []service.EventScope
		for _, t := range data.EventTypes {
			if reads(t) {
				out = append(out, service.EventScope{Type: t, AnyAgent: true})
			}
		}
		return out
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
	noCalls := scopes(func(t string) bool { return !callHistory(t) })
	run(fmt.Sprintf("no_call_history_%d_types", len(noCalls)), service.EventFilter{Key: "k", Keep: keep, MaxScan: service.MaxAuditScan, Scopes: noCalls}, 15)
	audit := scopes(func(t string) bool { return security[t] })
	run(fmt.Sprintf("audit_only_%d_types", len(audit)), service.EventFilter{Key: "k", Keep: keep, MaxScan: service.MaxAuditScan, Scopes: audit}, 13)
	run("counted", service.EventFilter{Key: "k", Keep: func(e *data.Event) bool { return !callHistory(e.Type) }, MaxScan: service.MaxAuditScan}, 0)
}
