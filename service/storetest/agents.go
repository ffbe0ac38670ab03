package storetest

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func storedAgent(id, ws, status string) *data.StoredAgent {
	a := &data.StoredAgent{Agent: *data.DefaultAgent()}
	a.ID, a.WorkspaceID, a.Name, a.Status = id, ws, "Agent "+id, status
	return a
}

func testAgents(t *testing.T, open Opener) {
	s := open(t)
	const ws = "ws_01JD6000000000000000000000"
	ids := []string{"agt_01JD6000000000000000000001", "agt_01JD6000000000000000000002", "agt_01JD6000000000000000000003"}
	view(t, s, func(tx service.Tx) error {
		a, err := tx.Agent(ids[0])
		rev, _ := tx.AgentRevision(ids[0])
		if a != nil || rev != 0 {
			t.Errorf("an absent agent: %+v, revision %d; want nil, 0", a, rev)
		}
		return err
	})
	for _, id := range ids {
		update(t, s, func(tx service.Tx) error { return tx.PutAgent(storedAgent(id, ws, data.AgentStatusDraft), "") })
	}
	firstRev := checkStoredAgents(t, s, ws, ids)
	checkAgentPublished(t, s, ws, ids, firstRev)
	checkAgentVersionDelete(t, s, ids[1], ids[0])
	// Deleting removes the row, its versions and its index entries.
	update(t, s, func(tx service.Tx) error {
		a, err := tx.Agent(ids[0])
		if err != nil {
			return err
		}
		return tx.DeleteAgent(a)
	})
	view(t, s, func(tx service.Tx) error {
		a, err := tx.Agent(ids[0])
		v, _ := tx.AgentVersion(ids[0], 1)
		page, _, _ := tx.AgentIDs(ws, "", nil, service.AgentSearch{}, data.PageRequest{PerPage: 10})
		pub, _, _ := tx.AgentIDs(ws, data.AgentStatusPublished, nil, service.AgentSearch{}, data.PageRequest{PerPage: 10})
		if a != nil || v != nil || len(page) != 2 || len(pub) != 0 {
			t.Errorf("after delete: %+v, %+v, ids %v, published %v", a, v, page, pub)
		}
		return err
	})
}

// checkStoredAgents reads the three draft agents of ws back: the row, a stable revision,
// the ids listed newest first, among some, by name, and none of another workspace. It
// returns the first agent's revision.
func checkStoredAgents(t *testing.T, s service.Store, ws string, ids []string) (firstRev uint64) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		a, err := tx.Agent(ids[0])
		if err != nil || a == nil || a.Name != "Agent "+ids[0] || a.LLMConfig.Provider != data.LLMGroq {
			t.Fatalf("stored agent: %+v, %v", a, err)
		}
		rev, _ := tx.AgentRevision(ids[0])
		again, _ := tx.AgentRevision(ids[0])
		if rev == 0 || rev != again {
			t.Errorf("revision %d then %d; want one non-zero number", rev, again)
		}
		firstRev = rev
		page, _, err := tx.AgentIDs(ws, "", nil, service.AgentSearch{}, data.PageRequest{PerPage: 10})
		if len(page) != 3 || page[0] != ids[2] {
			t.Errorf("ids %v, want all three, newest first", page)
		}
		only, _, _ := tx.AgentIDs(ws, "", []string{ids[1]}, service.AgentSearch{}, data.PageRequest{PerPage: 10})
		if len(only) != 1 || only[0] != ids[1] {
			t.Errorf("ids among one: %v", only)
		}
		// Names are "Agent <id>": a case-insensitive part of one id finds that agent only.
		named, _, _ := tx.AgentIDs(ws, "", nil, service.AgentSearch{Name: "AGENT " + strings.ToUpper(ids[1])}, data.PageRequest{PerPage: 10})
		if len(named) != 1 || named[0] != ids[1] {
			t.Errorf("ids by name: %v, want %s", named, ids[1])
		}
		if none, _, _ := tx.AgentIDs(ws, "", []string{ids[0]}, service.AgentSearch{Name: ids[1]}, data.PageRequest{PerPage: 10}); len(none) != 0 {
			t.Errorf("a name outside the ids among: %v", none)
		}
		other, _, _ := tx.AgentIDs("ws_01JD6000000000000000000009", "", nil, service.AgentSearch{}, data.PageRequest{PerPage: 10})
		if len(other) != 0 {
			t.Errorf("another workspace's ids: %v", other)
		}
		kb, _ := tx.KnowledgeBaseExists(ws, "kb_01JD6000000000000000000000")
		if kb {
			t.Error("an absent knowledge base exists")
		}
		return err
	})
	return firstRev
}

// checkAgentPublished publishes the first agent: publishing moves the status index
// entry and changes the revision (firstRev before), and the version is stored.
func checkAgentPublished(t *testing.T, s service.Store, ws string, ids []string, firstRev uint64) {
	t.Helper()
	update(t, s, func(tx service.Tx) error {
		a := storedAgent(ids[0], ws, data.AgentStatusPublished)
		a.LastVersion = 1
		v := &data.AgentVersion{AgentID: ids[0], VersionNumber: 1, Name: a.Name, AgentConfig: a.AgentConfig}
		if err := tx.PutAgentVersion(v); err != nil {
			return err
		}
		return tx.PutAgent(a, data.AgentStatusDraft)
	})
	view(t, s, func(tx service.Tx) error {
		rev, _ := tx.AgentRevision(ids[0])
		if rev == firstRev {
			t.Error("the revision did not change with the row")
		}
		pub, _, err := tx.AgentIDs(ws, data.AgentStatusPublished, nil, service.AgentSearch{}, data.PageRequest{PerPage: 10})
		drafts, _, _ := tx.AgentIDs(ws, data.AgentStatusDraft, nil, service.AgentSearch{}, data.PageRequest{PerPage: 10})
		if len(pub) != 1 || pub[0] != ids[0] || len(drafts) != 2 {
			t.Errorf("published %v, drafts %v", pub, drafts)
		}
		v, _ := tx.AgentVersion(ids[0], 1)
		missing, _ := tx.AgentVersion(ids[0], 2)
		list, _, _ := tx.AgentVersions(ids[0], data.PageRequest{PerPage: 10})
		if v == nil || v.VersionNumber != 1 || missing != nil || len(list) != 1 {
			t.Errorf("versions: %+v, %+v, %d listed", v, missing, len(list))
		}
		return err
	})
}

// checkAgentVersionDelete gives agent three versions, counts them (at most upTo), deletes
// the newest and an absent one (no error): the rest are listed and counted, and other's
// version is untouched.
func checkAgentVersionDelete(t *testing.T, s service.Store, agent, other string) {
	t.Helper()
	update(t, s, func(tx service.Tx) error {
		for n := 1; n <= 3; n++ {
			if err := tx.PutAgentVersion(&data.AgentVersion{AgentID: agent, VersionNumber: n, Name: "v"}); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(tx service.Tx) error {
		all, err := tx.AgentVersionCount(agent, 10)
		upTo, _ := tx.AgentVersionCount(agent, 2)
		if all != 3 || upTo != 2 {
			t.Errorf("version counts: %d (up to 10), %d (up to 2); want 3, 2", all, upTo)
		}
		return err
	})
	update(t, s, func(tx service.Tx) error {
		if err := tx.DeleteAgentVersion(agent, 3); err != nil {
			return err
		}
		return tx.DeleteAgentVersion(agent, 9)
	})
	view(t, s, func(tx service.Tx) error {
		gone, err := tx.AgentVersion(agent, 3)
		list, _, _ := tx.AgentVersions(agent, data.PageRequest{PerPage: 10})
		count, _ := tx.AgentVersionCount(agent, 10)
		kept, _ := tx.AgentVersion(other, 1)
		if gone != nil || len(list) != 2 || list[0].VersionNumber != 2 || count != 2 || kept == nil {
			t.Errorf("after deleting version 3: %+v, %d listed, counted %d, the other agent's version %+v", gone, len(list), count, kept)
		}
		return err
	})
}
