package service

import (
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestEventShownMasksOnlyTheBindingMembers: a number event read by a caller limited to
// agent A names data.HiddenAgent in place of agent B in inbound_agent_id and
// outbound_agent_id, and every other byte of its data is as written: a variable whose
// value happens to be B's id, the member order, the spacing. A's binding, an event of
// another type and a caller who sees every agent read the data unchanged.
func TestEventShownMasksOnlyTheBindingMembers(t *testing.T) {
	const a, b = "agt_01JD6AAAAAAAAAAAAAAAAAAAAA", "agt_01JD6BBBBBBBBBBBBBBBBBBBBB"
	raw := `{"id":"num_1", "inbound_agent_id" : "` + b + `","outbound_agent_id":"` + a + `","variables":{"inbound_agent_id":"` + b + `"}}`
	want := `{"id":"num_1", "inbound_agent_id" : "` + data.HiddenAgent + `","outbound_agent_id":"` + a + `","variables":{"inbound_agent_id":"` + b + `"}}`
	limited := visibilityOf(&data.Principal{AgentIDs: []string{a}})
	e := &data.Event{Type: data.EventNumberUpdated, Data: json.RawMessage(raw)}
	if got := string(limited.eventShown(e).Data); got != want {
		t.Errorf("masked data\n got %s\nwant %s", got, want)
	}
	if string(e.Data) != raw {
		t.Errorf("the stored event changed: %s", e.Data)
	}
	if got := visibilityOf(&data.Principal{}).eventShown(e); got != e {
		t.Errorf("a caller who sees every agent reads %s", got.Data)
	}
	other := &data.Event{Type: data.EventAgentUpdated, Data: json.RawMessage(`{"inbound_agent_id":"` + b + `"}`)}
	if got := limited.eventShown(other); got != other {
		t.Errorf("an agent event was rewritten: %s", got.Data)
	}
	unbound := &data.Event{Type: data.EventNumberCreated, Data: json.RawMessage(`{"inbound_agent_id":null,"outbound_agent_id":"` + a + `"}`)}
	if got := limited.eventShown(unbound); got != unbound {
		t.Errorf("a number of A and of no agent was rewritten: %s", got.Data)
	}
}
