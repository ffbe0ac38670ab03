package service_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestKnowledgeBaseDeleteRacingItsAttachToAHiddenAgent: a developer limited to agent A
// deletes a knowledge base while an owner attaches it to agent B, at once, many times.
// Never do both succeed: the delete checks who uses it in its own transaction, so either
// it sees B and is refused (403), or it commits first and the attach finds no knowledge
// base (422). On PostgreSQL the two transactions are SERIALIZABLE. Both engines.
func TestKnowledgeBaseDeleteRacingItsAttachToAHiddenAgent(t *testing.T) {
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	ada := mustUser(t, svc, "ada@example.com")
	owner, ws := testkit.As(ada), ada.PersonalWorkspaceID
	mine, err := svc.Agents.CreateAgent(owner, data.AgentCreate{Name: data.Some("A")})
	if err != nil {
		t.Fatal(err)
	}
	hidden, err := svc.Agents.CreateAgent(owner, data.AgentCreate{Name: data.Some("B")})
	if err != nil {
		t.Fatal(err)
	}
	limited := data.WithPrincipal(context.Background(), &data.Principal{UserID: ada.ID, WorkspaceID: ws, CurrentWorkspaceID: ws,
		Role: data.RoleDeveloper, Modules: data.Modules, AgentIDs: []string{mine.ID}})
	const rounds = 25
	for i := range rounds {
		kb, err := svc.KnowledgeBases.CreateKnowledgeBase(owner, data.KnowledgeBaseCreate{Name: fmt.Sprint("kb ", i)})
		if err != nil {
			t.Fatal(err)
		}
		var deleted, attached error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			deleted = svc.KnowledgeBases.DeleteKnowledgeBase(limited, kb.ID)
		}()
		go func() {
			defer wg.Done()
			<-start
			_, attached = svc.Agents.UpdateAgent(owner, hidden.ID, decode[data.AgentUpdate](t, `{"llm_config":{"knowledge_base_ids":["`+kb.ID+`"]}}`))
		}()
		close(start)
		wg.Wait()
		switch {
		case deleted == nil && attached == nil:
			t.Fatalf("round %d: the knowledge base was deleted and attached to the hidden agent both", i)
		case deleted != nil && data.ErrorCode(deleted) != data.EFORBIDDEN:
			t.Fatalf("round %d: the delete failed with %v, want forbidden", i, deleted)
		case attached != nil && data.ErrorCode(attached) != data.EINVALID:
			t.Fatalf("round %d: the attach failed with %v, want the knowledge base gone", i, attached)
		}
		b, err := svc.Agents.Agent(owner, hidden.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.KnowledgeBases.KnowledgeBase(owner, kb.ID); (err == nil) != (len(b.LLMConfig.KnowledgeBaseIDs) > 0) {
			t.Fatalf("round %d: B names %v, the knowledge base read: %v", i, b.LLMConfig.KnowledgeBaseIDs, err)
		}
		if len(b.LLMConfig.KnowledgeBaseIDs) > 0 { // detach, for the next round
			if _, err := svc.Agents.UpdateAgent(owner, hidden.ID, decode[data.AgentUpdate](t, `{"llm_config":{"knowledge_base_ids":[]}}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
}
