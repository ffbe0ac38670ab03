package service

import (
	"bytes"
	"encoding/json"

	"github.com/voiceapi/voiceapi/data"
)

// The masking rule (docs/api.md, "What a caller sees"): a record that belongs to no agent
// is read by callers limited to some agents, yet it may name an agent they do not see (a
// number's inbound_agent_id and outbound_agent_id). Such a caller reads data.HiddenAgent
// in that agent's place: the binding is there, and read-only to it, but whose it is stays
// untold (conventions §2). Every channel that shows such a record applies it here: the
// number routes (numberShown), the audit log and the event stream (eventShown, through
// eventSubjects' agentRefs). Webhooks and the workspace export need a token that sees
// every agent, for which nothing is masked.

// shownAgent is id as the caller may read it where a record it reads names an agent: id
// itself, nil for none, or data.HiddenAgent for an agent it does not see.
func (v visibility) shownAgent(id *string) *string {
	if id == nil || v.agent(*id) {
		return id
	}
	hidden := data.HiddenAgent
	return &hidden
}

// numberShown is n as the caller may read it: n itself, or a copy whose bindings to
// agents it does not see read data.HiddenAgent.
func (v visibility) numberShown(n *data.Number) *data.Number {
	in, out := v.shownAgent(n.InboundAgentID), v.shownAgent(n.OutboundAgentID)
	if in == n.InboundAgentID && out == n.OutboundAgentID {
		return n
	}
	shown := *n
	shown.InboundAgentID, shown.OutboundAgentID = in, out
	return &shown
}

// eventShown is e as the caller may read it: e itself, or a copy whose data's members
// naming an agent it does not see (its type's agentRefs) read data.HiddenAgent. Only the
// data changes; its hash still covers the event as written, which only a reader of every
// event, who is shown it unmasked, verifies (data.NeedAuditChain).
func (v visibility) eventShown(e *data.Event) *data.Event {
	refs := eventSubjects[e.Type].agentRefs
	if v.allAgents() || len(refs) == 0 {
		return e
	}
	raw := e.Data
	for _, name := range refs {
		if id := topLevelString(raw, name); id != "" && !v.agent(id) {
			raw = replaceTopLevelString(raw, name, data.HiddenAgent)
		}
	}
	if bytes.Equal(raw, e.Data) {
		return e
	}
	shown := *e
	shown.Data = raw
	return &shown
}

// eventsShown is eventShown over a page of events, in place.
func (v visibility) eventsShown(list []*data.Event) []*data.Event {
	for i, e := range list {
		list[i] = v.eventShown(e)
	}
	return list
}

// replaceTopLevelString returns raw, a JSON object, with the string value of its member
// name replaced by value, every other byte as it was (so an event's data keeps its order
// and form); raw itself when the member is missing or not a string.
func replaceTopLevelString(raw json.RawMessage, name, value string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return raw
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return raw
		}
		key, _ := t.(string)
		afterKey := dec.InputOffset()
		if key != name {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return raw
			}
			continue
		}
		t, err = dec.Token()
		if _, ok := t.(string); err != nil || !ok {
			return raw
		}
		end := int(dec.InputOffset())
		// The value starts at its opening quote, past the colon and any space.
		start := int(afterKey) + bytes.IndexByte(raw[afterKey:], '"')
		out := make(json.RawMessage, 0, len(raw)+len(value))
		out = append(out, raw[:start]...)
		quoted, _ := json.Marshal(value)
		out = append(out, quoted...)
		return append(out, raw[end:]...)
	}
	return raw
}
