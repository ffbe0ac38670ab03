package storetest

import (
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"agents_batch", testAgentsBatch})
}

// testAgentsBatch: Agents reads the agents of ids in their order, nil for an absent one,
// each as Agent reads it, whatever its workspace (the caller checks that).
func testAgentsBatch(t *testing.T, open Opener) {
	s := open(t)
	a := storedAgent("agt_01JD6100000000000000000001", "ws_01JD6100000000000000000000", data.AgentStatusDraft)
	b := storedAgent("agt_01JD6100000000000000000002", "ws_01JD6100000000000000000009", data.AgentStatusDraft)
	b.AnalysisConfig.Summary = true
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutAgent(a, ""); err != nil {
			return err
		}
		return tx.PutAgent(b, "")
	})
	view(t, s, func(tx service.Tx) error {
		ids := []string{b.ID, "agt_01JD61000000000000000000ZZ", a.ID, b.ID}
		got, err := tx.Agents(ids)
		if err != nil {
			return err
		}
		if len(got) != len(ids) {
			t.Fatalf("Agents(%v): %d agents", ids, len(got))
		}
		for i, id := range ids {
			one, err := tx.Agent(id)
			if err != nil {
				return err
			}
			if (one == nil) != (got[i] == nil) || one != nil && (got[i].ID != id || got[i].WorkspaceID != one.WorkspaceID ||
				got[i].Name != one.Name || got[i].AnalysisConfig.Summary != one.AnalysisConfig.Summary) {
				t.Errorf("Agents(%v)[%d] = %+v, Agent(%s) = %+v", ids, i, got[i], id, one)
			}
		}
		if none, err := tx.Agents(nil); err != nil || len(none) != 0 {
			t.Errorf("Agents(nil) = %v, %v", none, err)
		}
		return nil
	})
}

// BenchAgentsRead: the read of n agents (a call export's analysis columns over a
// workspace of n agents, service.ExportFields) one by one (Agent, as before walk8's fix)
// and a hundred at a time (Agents).
func BenchAgentsRead(b *testing.B, open Opener, n int) {
	s := open(b)
	ids := make([]string, n)
	for batch := 0; batch < n; batch += 500 {
		update(b, s, func(tx service.Tx) error {
			for i := batch; i < min(n, batch+500); i++ {
				ids[i] = fmt.Sprintf("agt_01JD62%020d", i)
				a := storedAgent(ids[i], "ws_01JD6200000000000000000000", data.AgentStatusDraft)
				a.AnalysisConfig.Fields = []data.AnalysisField{{Name: "resolved", Type: "boolean", Description: "Was it resolved?"}}
				if err := tx.PutAgent(a, ""); err != nil {
					return err
				}
			}
			return nil
		})
	}
	b.Run("one_by_one", func(b *testing.B) {
		for b.Loop() {
			view(b, s, func(tx service.Tx) error {
				for _, id := range ids {
					if _, err := tx.Agent(id); err != nil {
						return err
					}
				}
				return nil
			})
		}
	})
	b.Run("by_hundred", func(b *testing.B) {
		for b.Loop() {
			view(b, s, func(tx service.Tx) error {
				for i := 0; i < n; i += 100 {
					if _, err := tx.Agents(ids[i:min(n, i+100)]); err != nil {
						return err
					}
				}
				return nil
			})
		}
	})
}
