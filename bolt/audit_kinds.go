package bolt

import (
	"bytes"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/service"
)

// The events_by_facet entries by kind (schema 30), for an event with one (data.Event.Kind:
// a job.failed's job kind): "<ws>\x00gk\x00<agent id>\x00<type>\x00<kind>\x00<id>" beside
// its agent's entry, and "<ws>\x00tk\x00<type>\x00<kind>\x00<id>" beside its type's. A page
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

// eventKindScopes are the scopes e is listed in by its kind: none without one.
func eventKindScopes(workspaceID, agentID, typ, kind string) []string {
	if kind == "" {
		return nil
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
// given its agent and kind by service.EventAgent and service.EventKind; the entries are
// put in key order (putSorted). Other events are not read.
func listEventKindsOfStore(tx *bbolt.Tx) error {
	var entries []indexEntry
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
				for _, scope := range eventKindScopes(e.WorkspaceID, service.EventAgent(e), e.Type, service.EventKind(e)) {
					entries = append(entries, indexEntry{indexKey(scope, id), nil})
				}
			}
		}
		k, _ = c.Seek([]byte(ws + "\x01")) // the next workspace
	}
	return putSorted(tx.Bucket(bucketEventsByFacet), entries)
}
