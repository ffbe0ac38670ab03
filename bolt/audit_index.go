package bolt

import (
	"bytes"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// bucketEventsByFacet lists each workspace's events by type, "<ws>\x00t\x00<type>\x00<id>",
// and by the user who caused them, "<ws>\x00a\x00<user id>\x00<id>" (schema 27): an audit
// page filtered by type or actor walks only those events, where it looked at up to
// service.MaxAuditScan events of every kind a page. Since schema 29 also by the agent
// they are about and type, "<ws>\x00g\x00<agent id or "">\x00<type>\x00<id>"
// (audit_agents.go), and since schema 30 an event with a kind by it too (audit_kinds.go).
// Types, kinds, agent and user ids hold no NUL, so one facet's scope is
// never the prefix of another's.
var bucketEventsByFacet = []byte("events_by_facet")

func init() { allBuckets = append(allBuckets, bucketEventsByFacet) }

func eventTypeScope(workspaceID, typ string) string { return workspaceID + "\x00t\x00" + typ }

func eventActorScope(workspaceID, userID string) string {
	return workspaceID + "\x00a\x00" + userID
}

// eventFacetScopes are the schema 27 scopes e is listed in: its type's, and its actor's
// when a user caused it.
func eventFacetScopes(e *data.Event) []string {
	scopes := []string{eventTypeScope(e.WorkspaceID, e.Type)}
	if e.Actor.UserID != "" {
		scopes = append(scopes, eventActorScope(e.WorkspaceID, e.Actor.UserID))
	}
	return scopes
}

// indexEventFacets lists a new event under its facets: eventFacetScopes, and its agent's
// and type's (audit_agents.go), with a kind its kind's instead (audit_kinds.go).
func indexEventFacets(tx *bbolt.Tx, e *data.Event) error {
	b := tx.Bucket(bucketEventsByFacet)
	for _, scope := range append(eventFacetScopes(e), eventPairScopes(e.WorkspaceID, e.AgentID, e.Type, e.Kind)...) {
		if err := indexPut(b, scope, e.ID); err != nil {
			return err
		}
	}
	return nil
}

// eventFacetWalk narrows spec, a page of the workspace's events, to the facet f names:
// its (agent, type) scopes merged when it has some (a caller limited to some agents:
// another agent's events are never looked at; a scope of any agent is its type's, for a
// caller who sees every agent but not every type; a scope of a kind is its kind's:
// audit_kinds.go), else the actor's events when f names one
// (a person's events are few beside a common type's), else the type's. The list keeps
// its name, scope and cursors: its keys are event ids in either bucket.
func eventFacetWalk(spec *listSpec, workspaceID string, f service.EventFilter) {
	switch {
	case f.Scopes != nil:
		spec.walked, spec.scopes = bucketEventsByFacet, make([]string, 0, len(f.Scopes))
		for _, s := range f.Scopes {
			spec.scopes = append(spec.scopes, eventScopeKey(workspaceID, s))
		}
	case f.Actor != "":
		spec.walked, spec.scopes = bucketEventsByFacet, []string{eventActorScope(workspaceID, f.Actor)}
	case f.Type != "":
		spec.walked, spec.scopes = bucketEventsByFacet, []string{eventTypeScope(workspaceID, f.Type)}
	}
}

// deleteWorkspaceEventFacets removes a deleted workspace's facet entries.
func deleteWorkspaceEventFacets(tx *bbolt.Tx, workspaceID string) error {
	return deletePrefix(tx.Bucket(bucketEventsByFacet), []byte(workspaceID+"\x00"))
}

// listEventFacetsOfStore fills the facet index from the stored events (the schema 26 → 27
// migration, in the transaction that raises the version, so a crash leaves schema 26 to
// fill it again), each event's type and actor read once (storedEventFacets), the entries
// put in key order (putSorted). An index entry without its event (a removal audit verify
// reports) lists nothing.
func listEventFacetsOfStore(tx *bbolt.Tx) error {
	var entries []indexEntry
	err := eachStoredEventHeader(tx, func(_, id string, e *data.Event) error {
		for _, scope := range eventFacetScopes(e) {
			entries = append(entries, indexEntry{indexKey(scope, id), nil})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return putSorted(tx.Bucket(bucketEventsByFacet), entries)
}

// eachStoredEventHeader calls fn with every event indexed under a workspace, by workspace
// and id in order, read by storedEventFacets (an upgrade's fill): an index entry without
// its event is passed over.
func eachStoredEventHeader(tx *bbolt.Tx, fn func(ws, id string, e *data.Event) error) error {
	events := tx.Bucket(bucketEvents)
	c := tx.Bucket(bucketEventsByWS).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			continue
		}
		id := string(k[i+1:])
		v := events.Get([]byte(id))
		if v == nil {
			continue
		}
		e, err := storedEventFacets(id, v)
		if err != nil {
			return err
		}
		if err := fn(string(k[:i]), id, e); err != nil {
			return err
		}
	}
	return nil
}

// storedEventFacets reads what the facet index needs of a stored event, its workspace,
// type and actor, and not its payload: a binary event's header alone, another form
// parsed without following a reference (a call's event would decode the whole call).
func storedEventFacets(id string, v []byte) (*data.Event, error) {
	if isBinaryEvent(v) {
		e, _, err := decodeBinaryEvent(id, v)
		if err != nil {
			return nil, fmt.Errorf("event %s: %w", id, err)
		}
		return &e, nil
	}
	s, err := parseEvent(id, v)
	if err != nil {
		return nil, err
	}
	return &s.e, nil
}
