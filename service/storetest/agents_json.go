package storetest

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testAgentJSON: PutAgent given the agent's response encoding (data.StoredAgent.JSON, its
// api_key masked) reads back the row it was given, sealed key and last version
// included, as one given no encoding does; Agent never returns the encoding.
func testAgentJSON(t *testing.T, open Opener) {
	s := open(t)
	const ws = "ws_01JD6000000000000000000000"
	sealed := "sealed:not-a-real-ciphertext"
	var rows []*data.StoredAgent
	for i, id := range []string{"agt_01JD6000000000000000000011", "agt_01JD6000000000000000000012", "agt_01JD6000000000000000000013"} {
		a := storedAgent(id, ws, data.AgentStatusDraft)
		a.LastVersion = 7
		a.CreatedAt = data.NewTime(a.CreatedAt.AddDate(2026, 0, 0))
		a.UpdatedAt = a.CreatedAt
		a.LLMConfig.Tools = []*data.Tool{{Name: "end", Type: "end_call"}}
		if i != 1 {
			a.LLMConfig.APIKey = &sealed // i == 1: no key
		}
		if i > 0 {
			m := a.Agent.Masked()
			raw, err := m.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			a.JSON = raw
		}
		rows = append(rows, a)
		update(t, s, func(tx service.Tx) error { return tx.PutAgent(a, "") })
	}
	view(t, s, func(tx service.Tx) error {
		for _, want := range rows {
			got, err := tx.Agent(want.ID)
			if err != nil {
				return err
			}
			if got == nil || got.JSON != nil {
				t.Fatalf("agent %s read back %+v", want.ID, got)
			}
			// The same record: the same encoding, sealed key and last version included
			// (an empty array may come back for a nil one).
			g, _ := got.AppendJSON(nil)
			w, _ := want.AppendJSON(nil)
			if !bytes.Equal(g, w) || !reflect.DeepEqual(got.LLMConfig.APIKey, want.LLMConfig.APIKey) {
				t.Errorf("agent %s (given its JSON: %v):\n got %s\nwant %s", want.ID, want.JSON != nil, g, w)
			}
		}
		return nil
	})
}
