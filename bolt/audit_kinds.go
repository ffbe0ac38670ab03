package bolt

import (
	"bytes"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/service"
)

// The events_by_facet entries by kind (schema 30), for an event with one (data.Event.Kind:
// a job.failed's job kind): "<ws>\x00gk\x00<agent id>\x00<type>\x00<kind>\x00<id>" in
// place of its agent's entry (a pair is its agent's, type's and kind's events, "" the
// events without one), and "<ws>\x00tk\x00<type>\x00<kind>\x00<id>" beside its type's
// (which a scope of any agent without a kind walks, every kind's). A page
// of a caller who reads some job kinds walks the scopes of those kinds alone
// (service.EventScope.Kind), so that the failures of the others are never looked at:
// counted against the scan bound they told the caller how many there were. The kind is
// the service's rule (service.EventKind), handed over in data.Event.Kind; storage never
// derives it. Kinds hold no NUL, as types and ids, so no scope is another's prefix.

func eventAgentKindScope(workspaceID, agentID, typ, kind string) string {
	return workspaceID + "\x00gk\x00" + agentID + "\x00" + typ + "\x00" + kind
}

func eventTypeKindScope(workspaceID, typ, kind string) string {
	return workspaceID + "\x00tk\x00" + typ + "\x00" + kind
}

// eventPairScopes are the scopes an event is listed in by its agent and kind: its
// agent's and type's without a kind, else its kind's (agent's, and of any agent).
func eventPairScopes(workspaceID, agentID, typ, kind string) []string {
	if kind == "" {
		return []string{eventAgentScope(workspaceID, agentID, typ)}
	}
	return []string{eventAgentKindScope(workspaceID, agentID, typ, kind), eventTypeKindScope(workspaceID, typ, kind)}
}

// eventScopeKey is the facet scope of one service.EventScope.
func eventScopeKey(workspaceID string, s service.EventScope) string {
	switch {
	case s.Kind != "" && s.AnyAgent:
		return eventTypeKindScope(workspaceID, s.Type, s.Kind)
	case s.Kind != "":
		return eventAgentKindScope(workspaceID, s.Agent, s.Type, s.Kind)
	case s.AnyAgent:
		return eventTypeScope(workspaceID, s.Type)
	}
	return eventAgentScope(workspaceID, s.Agent, s.Type)
}

// listEventKindsOfStore fills the kind entries from the stored events (the schema 29 → 30
// migration, in the transaction that raises the version, so that a crash leaves schema 29
// to fill them again): in each workspace, the events of the types that have a kind
// (service.KindedEventTypes), found by their type's facet entries, each read whole and
// given its agent and kind by service.EventAgent and service.EventKind: its schema 29
// entry of agent and type is taken out for its kind's; the entries are put in key order
// (putSorted). Other events are not read.
func listEventKindsOfStore(tx *bbolt.Tx) error {
	var entries []indexEntry
	var moved [][]byte
	facets := tx.Bucket(bucketEventsByFacet).Cursor()
	c := tx.Bucket(bucketEventsByWS).Cursor()
	for k, _ := c.First(); k != nil; {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			k, _ = c.Next()
			continue
		}
		ws := string(k[:i])
		for _, typ := range service.KindedEventTypes() {
			prefix := indexKey(eventTypeScope(ws, typ), "")
			for f, _ := facets.Seek(prefix); f != nil && bytes.HasPrefix(f, prefix); f, _ = facets.Next() {
				id := string(f[len(prefix):])
				e, err := readEvent(tx, id)
				if err != nil {
					return err
				}
				if e == nil {
					continue
				}
				agent, kind := service.EventAgent(e), service.EventKind(e)
				if kind == "" {
					continue
				}
				moved = append(moved, indexKey(eventAgentScope(e.WorkspaceID, agent, e.Type), id))
				for _, scope := range eventPairScopes(e.WorkspaceID, agent, e.Type, kind) {
					entries = append(entries, indexEntry{indexKey(scope, id), nil})
				}
			}
		}
		k, _ = c.Seek([]byte(ws + "\x01")) // the next workspace
	}
	b := tx.Bucket(bucketEventsByFacet)
	for _, k := range moved {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return putSorted(b, entries)
}
