package service_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// usingReadsStore is the real store, counting AgentsUsingKnowledgeBase in each write
// transaction: for a caller limited to some agents that read is every agent and version
// of the workspace, in the write's transaction.
type usingReadsStore struct {
	service.Store
	reads *int
}

func (s usingReadsStore) Update(ctx context.Context, fn func(service.Tx) error) error {
	return s.Store.Update(ctx, func(tx service.Tx) error {
		*s.reads = 0 // a write may run again: count its last run
		return fn(usingReadsTx{tx, s.reads})
	})
}

type usingReadsTx struct {
	service.Tx
	reads *int
}

func (t usingReadsTx) AgentsUsingKnowledgeBase(workspaceID, kbID string) ([]string, error) {
	*t.reads++
	return t.Tx.AgentsUsingKnowledgeBase(workspaceID, kbID)
}

// TestKnowledgeBaseWriteReadsItsUsersOnce: a write by a caller limited to some agents
// reads which agents use the knowledge base once, for its check, and answers its access
// from that check rather than reading again; a create reads none (no agent uses a new
// knowledge base). Both engines.
func TestKnowledgeBaseWriteReadsItsUsersOnce(t *testing.T) {
	engine := testkit.OpenEngine(t)
	reads := 0
	svc := servicesOn(t, usingReadsStore{Store: engine, reads: &reads}, engine, nil)
	ada := mustUser(t, svc, "ada@example.com")
	owner, ws := testkit.As(ada), ada.PersonalWorkspaceID
	mine, err := svc.Agents.CreateAgent(owner, data.AgentCreate{Name: data.Some("A")})
	if err != nil {
		t.Fatal(err)
	}
	limited := data.WithPrincipal(context.Background(), &data.Principal{UserID: ada.ID, WorkspaceID: ws, CurrentWorkspaceID: ws,
		Role: data.RoleDeveloper, Modules: data.Modules, AgentIDs: []string{mine.ID}})

	kb, err := svc.KnowledgeBases.CreateKnowledgeBase(limited, data.KnowledgeBaseCreate{Name: "FAQ"})
	if err != nil {
		t.Fatal(err)
	}
	if reads != 0 || !kb.Access.Write {
		t.Errorf("create: %d reads of the agents using it, access %+v; want 0 and write", reads, kb.Access)
	}
	writes := []struct {
		name string
		do   func() (*data.KnowledgeBase, error)
	}{
		{"rename", func() (*data.KnowledgeBase, error) {
			return svc.KnowledgeBases.UpdateKnowledgeBase(limited, kb.ID, data.KnowledgeBaseUpdate{Name: data.Some("FAQ 2")})
		}},
		{"source add", func() (*data.KnowledgeBase, error) {
			return svc.KnowledgeBases.AddSources(limited, kb.ID, data.SourcesAdd{Texts: []data.TextInput{{Title: "Hours", Content: "Open 9 to 5."}}})
		}},
	}
	for _, w := range writes {
		got, err := w.do()
		if err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if reads != 1 || !got.Access.Write {
			t.Errorf("%s: %d reads of the agents using it, access %+v; want 1 (the check) and write", w.name, reads, got.Access)
		}
	}
	got, err := svc.KnowledgeBases.KnowledgeBase(limited, kb.ID)
	if err != nil || !got.Access.Write {
		t.Fatalf("show: %+v, %v; want write", got, err)
	}
	src := got.Texts[0].ID
	got, err = svc.KnowledgeBases.DeleteSource(limited, kb.ID, data.SourceTexts, src)
	if err != nil {
		t.Fatal(err)
	}
	if reads != 1 || !got.Access.Write {
		t.Errorf("source delete: %d reads of the agents using it, access %+v; want 1 (the check) and write", reads, got.Access)
	}
}
