package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"agents_to_seal", testAgentsToSeal})
}

// The list of agents whose headers the upgrade's job seals: only listing adds to it (an
// agent's write never does), it is read by workspace a few ids at a time, and an agent
// leaves it when sealed or deleted. A version stored again replaces the stored one in
// place (the job's rewrite), still one version.
func testAgentsToSeal(t *testing.T, open Opener) {
	s := open(t)
	const ws, other = "ws_01JD6000000000000000000000", "ws_01JD6000000000000000000009"
	ids := []string{"agt_01JD6000000000000000000001", "agt_01JD6000000000000000000002", "agt_01JD6000000000000000000003"}
	foreign := "agt_01JD6000000000000000000004"
	update(t, s, func(tx service.Tx) error {
		for _, id := range ids {
			if err := tx.PutAgent(storedAgent(id, ws, data.AgentStatusDraft), ""); err != nil {
				return err
			}
		}
		return tx.PutAgent(storedAgent(foreign, other, data.AgentStatusDraft), "")
	})
	listed := func(ws string, limit int) []string {
		t.Helper()
		var got []string
		view(t, s, func(tx service.Tx) (err error) {
			got, err = tx.AgentsToSeal(ws, limit)
			return err
		})
		return got
	}
	if got := listed(ws, 10); len(got) != 0 {
		t.Fatalf("listed before any listing: %v", got)
	}
	update(t, s, func(tx service.Tx) error {
		for _, id := range ids {
			if err := tx.ListAgentToSeal(ws, id); err != nil {
				return err
			}
		}
		if err := tx.ListAgentToSeal(ws, ids[0]); err != nil { // twice is once
			return err
		}
		return tx.ListAgentToSeal(other, foreign)
	})
	if got := listed(ws, 2); !slices.Equal(got, ids[:2]) {
		t.Errorf("AgentsToSeal(ws, 2) = %v, want %v", got, ids[:2])
	}
	if got := listed(other, 10); !slices.Equal(got, []string{foreign}) {
		t.Errorf("AgentsToSeal(other) = %v, want [%s]", got, foreign)
	}
	update(t, s, func(tx service.Tx) error {
		if err := tx.AgentSealed(ws, ids[0]); err != nil {
			return err
		}
		a, err := tx.Agent(ids[1])
		if err != nil {
			return err
		}
		return tx.DeleteAgent(a)
	})
	if got := listed(ws, 10); !slices.Equal(got, ids[2:]) {
		t.Errorf("after one sealed and one deleted: %v, want %v", got, ids[2:])
	}

	t0 := data.NewTime(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	v := &data.AgentVersion{AgentID: ids[2], VersionNumber: 1, Name: "v1", AgentConfig: data.DefaultAgent().AgentConfig, CreatedAt: t0, PublishedBy: "usr_1"}
	update(t, s, func(tx service.Tx) error { return tx.PutAgentVersion(v) })
	again := *v
	again.LLMConfig.Tools = []*data.Tool{{Name: "crm", Type: "custom_function", CustomFunctionHeaders: []string{"Authorization: sealed-value"}}}
	update(t, s, func(tx service.Tx) error { return tx.PutAgentVersion(&again) })
	view(t, s, func(tx service.Tx) error {
		got, err := tx.AgentVersion(ids[2], 1)
		if err != nil || got == nil || len(got.LLMConfig.Tools) != 1 || !slices.Equal(got.LLMConfig.Tools[0].CustomFunctionHeaders, []string{"Authorization: sealed-value"}) ||
			got.Name != "v1" || !got.CreatedAt.Equal(t0.Time) {
			t.Errorf("the version stored again reads %+v, %v", got, err)
		}
		list, _, err := tx.AgentVersions(ids[2], data.PageRequest{PerPage: 10})
		if err != nil || len(list) != 1 {
			t.Errorf("versions after a rewrite: %d, %v; want 1", len(list), err)
		}
		return err
	})
}
