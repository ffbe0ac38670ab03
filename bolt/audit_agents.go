package bolt

import (
	"bytes"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/service"
)

// The events_by_facet entries by agent (schema 29): "<ws>\x00g\x00<agent id>\x00<type>\x00<id>",
// the agent "" for an event about none. A page of a caller limited to some agents walks
// the scopes of its agents and of the types it may read (service.EventFilter.Scopes),
// merged by id, so that the events of other agents are never looked at: counted against
// the scan bound they told the caller how many there were, by how soon its pages stopped.
// The agent an event is about is the service's rule (service.EventAgent), handed over in
// data.Event.AgentID; storage never derives it.

func eventAgentScope(workspaceID, agentID, typ string) string {
	return workspaceID + "\x00g\x00" + agentID + "\x00" + typ
}

// listEventAgentsOfStore fills the agent entries from the stored events (the schema 28 →
// 29 migration, in the transaction that raises the version, so that a crash leaves schema
// 28 to fill them again), each event read whole (its agent is in its data, which a call's
// event takes from the call) and given its agent by service.EventAgent; the entries are
// put in key order (putSorted). An index entry without its event lists nothing.
func listEventAgentsOfStore(tx *bbolt.Tx) error {
	var entries []indexEntry
	c := tx.Bucket(bucketEventsByWS).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			continue
		}
		id := string(k[i+1:])
		e, err := readEvent(tx, id)
		if err != nil {
			return err
		}
		if e == nil {
			continue
		}
		entries = append(entries, indexEntry{indexKey(eventAgentScope(e.WorkspaceID, service.EventAgent(e), e.Type), id), nil})
	}
	return putSorted(tx.Bucket(bucketEventsByFacet), entries)
}
