package service_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// agentReadsStore is the real store, counting the agent reads of its read transactions:
// one by one (Agent) and a page at a time (Agents).
type agentReadsStore struct {
	service.Store
	one, pages *int
}

func (s agentReadsStore) View(ctx context.Context, fn func(service.Tx) error) error {
	return s.Store.View(ctx, func(tx service.Tx) error { return fn(agentReadsTx{tx, s.one, s.pages}) })
}

type agentReadsTx struct {
	service.Tx
	one, pages *int
}

func (t agentReadsTx) Agent(id string) (*data.StoredAgent, error) {
	*t.one++
	return t.Tx.Agent(id)
}

func (t agentReadsTx) Agents(ids []string) ([]*data.StoredAgent, error) {
	*t.pages++
	return t.Tx.Agents(ids)
}

// TestExportFieldsReadsAgentsByPage: a call export's analysis columns over 150 agents read
// them two pages at a time, not one by one (walk8: 2,000 agents, one PostgreSQL round
// trip each, 1.4 s whatever the export's limit).
func TestExportFieldsReadsAgentsByPage(t *testing.T) {
	e := newCallsEnv(t)
	for i := range 148 { // and A and B
		if _, err := e.svc.Agents.CreateAgent(e.owner, data.AgentCreate{Name: data.Some(fmt.Sprint("Agent ", i))}); err != nil {
			t.Fatal(err)
		}
	}
	var one, pages int
	svc, err := service.New(agentReadsStore{Store: e.db, one: &one, pages: &pages}, e.db.ServiceOptions())
	if err != nil {
		t.Fatal(err)
	}
	want, err := e.svc.Analytics.ExportFields(e.owner, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.Analytics.ExportFields(e.owner, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	if one != 0 || pages > 2 {
		t.Errorf("the export's columns read 150 agents in %d reads of one and %d of a page; want 0 and at most 2", one, pages)
	}
}
