package data

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestConversationSummaryIsTheRecordWithoutMessages: a listed conversation has every
// member of the shown one but messages, with the same values (a member added to
// Conversation and not to ConversationSummary fails here).
func TestConversationSummaryIsTheRecordWithoutMessages(t *testing.T) {
	version, reason, call, ended := 3, EndUserEnded, "call_1", NewTime(time.Date(2026, 11, 21, 10, 4, 5, 0, time.UTC))
	c := &Conversation{ID: "conv_1", WorkspaceID: "ws_1", AgentID: "agt_1", AgentVersion: &version, Status: ConversationEnded,
		Variables: map[string]any{"a": "b"}, Messages: []ConversationItem{{Role: ItemUser, Content: "hi"}},
		Usage: TokenUsage{InputTokens: 1, OutputTokens: 2}, AgentTurns: 4, DisconnectionReason: &reason, CallID: &call,
		CreatedAt: ended, UpdatedAt: ended, EndedAt: &ended}
	var full, summary map[string]any
	raw, _ := json.Marshal(c)
	json.Unmarshal(raw, &full)
	raw, _ = json.Marshal(c.Summary())
	json.Unmarshal(raw, &summary)
	delete(full, "messages")
	if !reflect.DeepEqual(full, summary) {
		t.Errorf("summary\n%v\nwant the record without messages\n%v", summary, full)
	}
}
