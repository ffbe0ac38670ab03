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
			db, err := Open(b.TempDir(), Options{NoSync: true, SecretKey: make([]byte, 32)})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			const ws, kb = "ws_01JD6000000000000000000001", "kb_01JD6000000000000000000001"
			prompt := strings.Repeat("Answer the caller kindly and briefly. ", 100) // a 3.8 KB prompt
			now := data.NewTime(time.Now())
			for i := 0; i < shape.agents; i++ {
				if err := db.Update(context.Background(), func(tx service.Tx) error {
					a := &data.StoredAgent{Agent: data.Agent{ID: fmt.Sprintf("agt_01JD60000000000000000%05d", i), WorkspaceID: ws,
						Name: "Agent", Status: data.AgentStatusPublished, CreatedAt: now, UpdatedAt: now}, LastVersion: shape.versions}
					a.PromptConfig.Prompt = prompt
					a.LLMConfig.KnowledgeBaseIDs = []string{}
					if err := tx.PutAgent(a, ""); err != nil {
						return err
					}
					for n := 1; n <= shape.versions; n++ {
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
			b.ReportAllocs()
			for b.Loop() {
				if err := db.View(context.Background(), func(tx service.Tx) error {
					using, err := tx.AgentsUsingKnowledgeBase(ws, kb)
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
