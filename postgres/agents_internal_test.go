package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func newTestAgent(id, ws string, kbs ...string) *data.StoredAgent {
	a := &data.StoredAgent{Agent: *data.DefaultAgent()}
	a.ID, a.WorkspaceID, a.Name, a.Status = id, ws, "Agent "+id, data.AgentStatusDraft
	a.LLMConfig.KnowledgeBaseIDs = kbs
	return a
}

func updateTx(t *testing.T, db *DB, fn func(t *tx) error) {
	t.Helper()
	if err := db.Update(context.Background(), func(st service.Tx) error { return fn(st.(*tx)) }); err != nil {
		t.Fatal(err)
	}
}

// The knowledge base hook drops the id from the workspace's agents only, keeping the
// other ids in order and giving each changed row a new revision.
func TestKnowledgeBaseHookDropsTheID(t *testing.T) {
	db := openCallsTestDB(t)
	a, b, other := newTestAgent("agt_A", "ws_1", "kb_1", "kb_2", "kb_3"), newTestAgent("agt_B", "ws_1", "kb_3"), newTestAgent("agt_C", "ws_2", "kb_2")
	revs := map[string]uint64{}
	updateTx(t, db, func(t *tx) error {
		for _, ag := range []*data.StoredAgent{a, b, other} {
			if err := t.PutAgent(ag, ""); err != nil {
				return err
			}
		}
		for _, id := range []string{"agt_A", "agt_B", "agt_C"} {
			revs[id], _ = t.AgentRevision(id)
		}
		return nil
	})
	updateTx(t, db, func(t *tx) error {
		for _, hook := range knowledgeBaseDeleteHooks {
			if err := hook(t, "ws_1", "kb_2"); err != nil {
				return err
			}
		}
		return nil
	})
	updateTx(t, db, func(tx *tx) error {
		for id, want := range map[string][]string{"agt_A": {"kb_1", "kb_3"}, "agt_B": {"kb_3"}, "agt_C": {"kb_2"}} {
			ag, err := tx.Agent(id)
			if err != nil {
				return err
			}
			if !slices.Equal(ag.LLMConfig.KnowledgeBaseIDs, want) {
				t.Errorf("%s: knowledge_base_ids %v, want %v", id, ag.LLMConfig.KnowledgeBaseIDs, want)
			}
			rev, _ := tx.AgentRevision(id)
			if changed := rev != revs[id]; changed != (id == "agt_A") {
				t.Errorf("%s: revision %d then %d", id, revs[id], rev)
			}
		}
		return nil
	})
}

// An agent's delete unbinds the numbers still bound to it, either way, and removes its
// versions; other bindings stay.
func TestAgentDeleteUnbindsNumbers(t *testing.T) {
	db := openCallsTestDB(t)
	agentA, agentB := "agt_A", "agt_B"
	n1 := &data.Number{ID: "num_1", WorkspaceID: "ws_1", PhoneNumber: "+15550001", Provider: "sip", InboundAgentID: &agentA, OutboundAgentID: &agentB}
	n2 := &data.Number{ID: "num_2", WorkspaceID: "ws_1", PhoneNumber: "+15550002", Provider: "sip", InboundAgentID: &agentA, OutboundAgentID: &agentA}
	a := newTestAgent(agentA, "ws_1")
	updateTx(t, db, func(t *tx) error {
		for _, n := range []*data.Number{n1, n2} {
			if _, err := t.InsertNumber(n); err != nil {
				return err
			}
		}
		if err := t.PutAgentVersion(&data.AgentVersion{AgentID: agentA, VersionNumber: 1, Name: "v1", AgentConfig: a.AgentConfig}); err != nil {
			return err
		}
		return t.PutAgent(a, "")
	})
	updateTx(t, db, func(t *tx) error { return t.DeleteAgent(a) })
	updateTx(t, db, func(tx *tx) error {
		got1, _ := tx.Number("num_1")
		got2, _ := tx.Number("num_2")
		if got1.InboundAgentID != nil || got1.OutboundAgentID == nil || *got1.OutboundAgentID != agentB {
			t.Errorf("num_1 after agent A's delete: %+v", got1)
		}
		if got2.InboundAgentID != nil || got2.OutboundAgentID != nil {
			t.Errorf("num_2 after agent A's delete: %+v", got2)
		}
		if v, _ := tx.AgentVersion(agentA, 1); v != nil {
			t.Errorf("a deleted agent's version stays: %+v", v)
		}
		return nil
	})
}

// A workspace's cascades remove its agents, versions, numbers, calls and what is derived
// from them, and nothing of another workspace.
func TestWorkspaceCascades(t *testing.T) {
	db := openCallsTestDB(t)
	at := data.NewTime(time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC))
	g := &data.IDGen{Now: func() time.Time { return at.Time }, Rand: zeroRand{}}
	d := int64(1000)
	updateTx(t, db, func(t *tx) error {
		for i, ws := range []string{"ws_1", "ws_2"} {
			agent := "agt_" + ws
			if err := t.PutAgent(newTestAgent(agent, ws), ""); err != nil {
				return err
			}
			if err := t.PutAgentVersion(&data.AgentVersion{AgentID: agent, VersionNumber: 1, Name: "v1"}); err != nil {
				return err
			}
			if _, err := t.InsertNumber(&data.Number{ID: "num_" + ws, WorkspaceID: ws, PhoneNumber: "+1555000" + string(rune('0'+i)), Provider: "sip"}); err != nil {
				return err
			}
			c := &data.Call{ID: g.New(data.PrefixCall), WorkspaceID: ws, AgentID: agent, Direction: data.DirectionWeb,
				Status: data.CallEnded, DurationMS: &d, EndedAt: &at, CreatedAt: at, UpdatedAt: at}
			if err := t.InsertCall(c); err != nil {
				return err
			}
		}
		return nil
	})
	updateTx(t, db, func(t *tx) error {
		for _, cascade := range workspaceCascades {
			if err := cascade(t, "ws_1"); err != nil {
				return err
			}
		}
		return nil
	})
	for _, table := range []string{"agents", "numbers", "calls", "call_scope_counts", "call_rollups", "call_minutes"} {
		var left, kept int
		err := db.pool.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE workspace_id = 'ws_1'), count(*) FILTER (WHERE workspace_id = 'ws_2') FROM `+table).Scan(&left, &kept)
		if err != nil || left != 0 || kept == 0 {
			t.Errorf("%s: %d rows of the deleted workspace left, %d of the other kept (%v)", table, left, kept, err)
		}
	}
	var versions []string
	rows, _ := db.pool.Query(context.Background(), `SELECT agent_id FROM agent_versions`)
	for rows.Next() {
		var id string
		rows.Scan(&id)
		versions = append(versions, id)
	}
	rows.Close()
	if !slices.Equal(versions, []string{"agt_ws_2"}) {
		t.Errorf("versions left: %v", versions)
	}
}

// Quota counters count a workspace's agents and numbers, stopping at the bound.
func TestAgentAndNumberCounters(t *testing.T) {
	db := openCallsTestDB(t)
	updateTx(t, db, func(t *tx) error {
		for _, id := range []string{"agt_1", "agt_2", "agt_3"} {
			if err := t.PutAgent(newTestAgent(id, "ws_1"), ""); err != nil {
				return err
			}
			if _, err := t.InsertNumber(&data.Number{ID: "num_" + id, WorkspaceID: "ws_1", PhoneNumber: "+1555" + id, Provider: "sip"}); err != nil {
				return err
			}
		}
		return t.PutAgent(newTestAgent("agt_9", "ws_2"), "")
	})
	updateTx(t, db, func(tx *tx) error {
		for _, kind := range []string{data.LimitAgents, data.LimitNumbers} {
			for upTo, want := range map[int64]int64{-1: 3, 0: 0, 2: 2, 10: 3} {
				if got, err := quotaCounters[kind](tx, "ws_1", upTo); err != nil || got != want {
					t.Errorf("%s up to %d = %d, %v; want %d", kind, upTo, got, err, want)
				}
			}
		}
		return nil
	})
}

type zeroRand struct{}

func (zeroRand) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// Agents and versions stored before analysis_config existed (config without the member)
// read with the default group: no migration rewrites them.
func TestAgentsWithoutAnalysisConfigRead(t *testing.T) {
	db := openCallsTestDB(t)
	a := newTestAgent("agt_old", "ws_1")
	a.LastVersion = 1
	updateTx(t, db, func(t *tx) error {
		if err := t.PutAgent(a, ""); err != nil {
			return err
		}
		if err := t.PutAgentVersion(&data.AgentVersion{AgentID: a.ID, VersionNumber: 1, Name: a.Name, AgentConfig: a.AgentConfig}); err != nil {
			return err
		}
		for _, table := range []string{"agents", "agent_versions"} {
			if _, err := t.exec(`UPDATE ` + table + ` SET config = config - 'analysis_config'`); err != nil {
				return err
			}
		}
		return nil
	})
	updateTx(t, db, func(tx *tx) error {
		var stripped bool
		if err := tx.queryRow(`SELECT NOT (config ? 'analysis_config') FROM agents WHERE id = $1`, a.ID).Scan(&stripped); err != nil || !stripped {
			t.Fatalf("the row still holds analysis_config (%v)", err)
		}
		got, err := tx.Agent(a.ID)
		if err != nil {
			return err
		}
		v, err := tx.AgentVersion(a.ID, 1)
		if err != nil {
			return err
		}
		want, _ := json.Marshal(data.DefaultAnalysisConfig())
		for _, c := range []data.AnalysisConfig{got.AnalysisConfig, v.AnalysisConfig} {
			if b, _ := json.Marshal(c); string(b) != string(want) {
				t.Errorf("analysis_config read as %s, want %s", b, want)
			}
		}
		return nil
	})
}
