package postgres

import (
	"strings"
	"testing"
	"time"
)

// The bound's count of open conversations reads the index conversations_open (migration
// 0023), not every conversation of the workspace.
func TestOpenConversationsReadTheirIndex(t *testing.T) {
	now := time.Now()
	plan := queryPlan(t, openConversationsSQL, "ws_1", now.Add(-30*time.Minute), now, 100)
	if !strings.Contains(plan, "conversations_open") {
		t.Errorf("the count of open conversations does not read conversations_open:\n%s", plan)
	}
}

// A call's delete finds its conversation through the index conversations_by_call
// (migration 0024), not by reading every conversation.
func TestConversationOfCallReadsItsIndex(t *testing.T) {
	plan := queryPlan(t, conversationOfCallSQL, "call_1")
	if !strings.Contains(plan, "conversations_by_call") {
		t.Errorf("the conversation of a call is not found through conversations_by_call:\n%s", plan)
	}
}
