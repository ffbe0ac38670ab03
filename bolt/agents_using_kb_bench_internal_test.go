package bolt

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkAgentsUsingKnowledgeBase times the read behind a knowledge base's write by a
// caller limited to some agents (service.checkKnowledgeBaseWritable): every agent row of
// the workspace and, for each that does not name the knowledge base, every stored
// version, decoded. It runs in the write's transaction, so on bbolt it holds the one
// writer that long (docs/performance.md, "A limited caller's knowledge base write").
func BenchmarkAgentsUsingKnowledgeBase(b *testing.B) {
	for _, shape := range []struct{ agents, versions int }{{100, 10}, {500, 20}} {
		b.Run(fmt.Sprintf("%d_agents_%d_versions", shape.agents, shape.versions), func(b *testing.B) {
			db := agentsWithVersions(b, shape.agents, shape.versions)
			b.ReportAllocs()
			for b.Loop() {
				if err := db.View(context.Background(), func(tx service.Tx) error {
					using, err := tx.AgentsUsingKnowledgeBase(benchWS, benchKB)
					if err == nil && len(using) != 0 {
						err = fmt.Errorf("used by %v", using)
					}
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAgentIDsUsingKnowledgeBase times a page of the agents list's knowledge_base_id=
// filter on the same workspaces, none using it: the worst case, every agent looked at (up
// to data.MaxAgentSearchScan) and its versions passed over by their stored bytes.
func BenchmarkAgentIDsUsingKnowledgeBase(b *testing.B) {
	for _, shape := range []struct{ agents, versions int }{{100, 10}, {500, 20}} {
		b.Run(fmt.Sprintf("%d_agents_%d_versions", shape.agents, shape.versions), func(b *testing.B) {
			db := agentsWithVersions(b, shape.agents, shape.versions)
			b.ReportAllocs()
			for b.Loop() {
				if err := db.View(context.Background(), func(tx service.Tx) error {
					ids, _, err := tx.AgentIDs(benchWS, "", nil, service.AgentSearch{KnowledgeBaseID: benchKB, MaxScan: data.MaxAgentSearchScan}, data.PageRequest{PerPage: 100})
					if err == nil && len(ids) != 0 {
						err = fmt.Errorf("used by %v", ids)
					}
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

const benchWS, benchKB = "ws_01JD6000000000000000000001", "kb_01JD6000000000000000000001"

// agentsWithVersions is a database of agents of benchWS with a 3.8 KB prompt and versions
// versions each, none naming benchKB.
func agentsWithVersions(b *testing.B, agents, versions int) *DB {
	b.Helper()
	db, err := Open(b.TempDir(), Options{NoSync: true, SecretKey: make([]byte, 32)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	prompt := strings.Repeat("Answer the caller kindly and briefly. ", 100) // a 3.8 KB prompt
	now := data.NewTime(time.Now())
	for i := 0; i < agents; i++ {
		if err := db.Update(context.Background(), func(tx service.Tx) error {
			a := &data.StoredAgent{Agent: data.Agent{ID: fmt.Sprintf("agt_01JD60000000000000000%05d", i), WorkspaceID: benchWS,
				Name: "Agent", Status: data.AgentStatusPublished, CreatedAt: now, UpdatedAt: now}, LastVersion: versions}
			a.PromptConfig.Prompt = prompt
			a.LLMConfig.KnowledgeBaseIDs = []string{}
			if err := tx.PutAgent(a, ""); err != nil {
				return err
			}
			for n := 1; n <= versions; n++ {
				if err := tx.PutAgentVersion(&data.AgentVersion{AgentID: a.ID, VersionNumber: n, Name: "Agent",
					AgentConfig: a.AgentConfig, CreatedAt: now}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	return db
}
