package agenttest_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/agenttest"
	"github.com/voiceapi/voiceapi/data"
)

// conversationItems is a conversation with every kind of item: the agent's opening, the
// caller, a tool call that failed its schema, the same tool called well, an extraction,
// the agent's replies with latencies.
func conversationItems() []data.ConversationItem {
	lat := func(ms int64) *data.TurnLatency { return &data.TurnLatency{FirstToken: ms / 2, Total: ms} }
	return []data.ConversationItem{
		{Role: data.ItemAgent, Content: "Hello, Trattoria here!"},
		{Role: data.ItemUser, Content: "A table for two at eight, please."},
		{Role: data.ItemAgent, LatencyMS: lat(300)},
		{Role: data.ItemTool, Content: `book({"people":"two"}) → {"error":"bad arguments"}`, ToolCall: &data.ToolCallItem{Name: "book",
			Arguments: map[string]any{"people": "two"}, Result: map[string]any{"error": "bad arguments"}, Error: true}},
		{Role: data.ItemAgent, LatencyMS: lat(250)},
		{Role: data.ItemTool, Content: `book({"people":2,"time":"20:00"}) → {"status":200}`, ToolCall: &data.ToolCallItem{Name: "book",
			Arguments: map[string]any{"people": 2.0, "time": "20:00", "extra": map[string]any{"high_chair": true}},
			Result:    map[string]any{"status": 200, "body": `{"booking_id":"B7"}`}}},
		{Role: data.ItemTool, Content: `note({"vip":true}) → {"set":{"vip":true}}`, ToolCall: &data.ToolCallItem{Name: "note",
			Arguments: map[string]any{"vip": true}, Result: map[string]any{"set": map[string]any{"vip": true}}}},
		{Role: data.ItemAgent, Content: "You're booked for two at 20:00. Anything else?", LatencyMS: lat(900)},
	}
}

// TestEvaluateEveryCriterion: each criterion type that a rule decides, a passing and a
// failing case, with the item its verdict rests on.
func TestEvaluateEveryCriterion(t *testing.T) {
	items := conversationItems()
	vars := map[string]any{"vip": true, "booking_id": "B7", "party": 2.0}
	cases := []struct {
		name     string
		c        data.Criterion
		end      string
		pass     bool
		evidence int // -1: none
		reason   string
	}{
		{"tool_called", data.Criterion{Type: data.CriterionToolCalled, Name: "book"}, "", true, 5, "called book"},
		{"tool_called with a subset of its arguments", data.Criterion{Type: data.CriterionToolCalled, Name: "book",
			Arguments: map[string]any{"people": 2.0, "extra": map[string]any{"high_chair": true}}}, "", true, 5, "called book"},
		{"tool_called with other arguments", data.Criterion{Type: data.CriterionToolCalled, Name: "book",
			Arguments: map[string]any{"people": 4.0}}, "", false, 3, "never successfully"},
		{"tool_called with {} for a member that is no object", data.Criterion{Type: data.CriterionToolCalled, Name: "book",
			Arguments: map[string]any{"people": map[string]any{}}}, "", false, 3, "never successfully"},
		{"tool_called with {} for a member that is an object", data.Criterion{Type: data.CriterionToolCalled, Name: "book",
			Arguments: map[string]any{"extra": map[string]any{}}}, "", true, 5, "called book"},
		{"tool_called never", data.Criterion{Type: data.CriterionToolCalled, Name: "cancel"}, "", false, -1, "never called cancel"},
		{"tool_not_called", data.Criterion{Type: data.CriterionToolNotCalled, Name: "cancel"}, "", true, -1, "never called"},
		{"tool_not_called but called", data.Criterion{Type: data.CriterionToolNotCalled, Name: "book"}, "", false, 3, "called book"},
		{"says", data.Criterion{Type: data.CriterionSays, Pattern: `(?i)booked for (\w+)`}, "", true, 7, "booked for two"},
		{"says nothing like it", data.Criterion{Type: data.CriterionSays, Pattern: `sorry`}, "", false, -1, "No turn"},
		{"says reads only the agent", data.Criterion{Type: data.CriterionSays, Pattern: `at eight`}, "", false, -1, "No turn"},
		{"not_says", data.Criterion{Type: data.CriterionNotSays, Pattern: `(?i)sorry`}, "", true, -1, "No turn"},
		{"not_says but says", data.Criterion{Type: data.CriterionNotSays, Pattern: `Trattoria`}, "", false, 0, "Trattoria"},
		{"variable_equals", data.Criterion{Type: data.CriterionVariableEquals, Name: "vip", Value: true}, "", true, 6, "is true"},
		{"variable_equals a number", data.Criterion{Type: data.CriterionVariableEquals, Name: "party", Value: 2.0}, "", true, -1, "is 2"},
		{"variable_equals from a function's answer", data.Criterion{Type: data.CriterionVariableEquals, Name: "booking_id", Value: "B7"}, "", true, 5, `"B7"`},
		{"variable_equals another value", data.Criterion{Type: data.CriterionVariableEquals, Name: "vip", Value: false}, "", false, 6, "want false"},
		{"variable_equals of a type that differs", data.Criterion{Type: data.CriterionVariableEquals, Name: "party", Value: "2"}, "", false, -1, `want "2"`},
		{"variable_equals never set", data.Criterion{Type: data.CriterionVariableEquals, Name: "name", Value: "Ada"}, "", false, -1, "never set"},
		{"ends_with", data.Criterion{Type: data.CriterionEndsWith, Reason: data.EndAgentEnded}, data.EndAgentEnded, true, 7, "agent_ended"},
		{"ends_with another reason", data.Criterion{Type: data.CriterionEndsWith, Reason: data.EndTransferred}, data.EndMaxTurns, false, 7, "max_turns"},
		{"max_latency_ms", data.Criterion{Type: data.CriterionMaxLatencyMS, Value: 900.0}, "", true, 7, "900 ms"},
		{"max_latency_ms just under the slowest", data.Criterion{Type: data.CriterionMaxLatencyMS, Value: 899.0}, "", false, 7, "900 ms"},
	}
	for _, c := range cases {
		v := agenttest.Evaluate(c.c, items, vars, c.end)
		if v.Passed != c.pass {
			t.Errorf("%s: passed %v, want %v (%s)", c.name, v.Passed, c.pass, v.Reason)
		}
		switch {
		case c.evidence < 0 && v.Evidence != nil:
			t.Errorf("%s: evidence item %d, want none", c.name, v.Evidence.Item)
		case c.evidence >= 0 && (v.Evidence == nil || v.Evidence.Item != c.evidence || v.Evidence.Content != items[c.evidence].Content):
			t.Errorf("%s: evidence %+v, want item %d", c.name, v.Evidence, c.evidence)
		}
		if !strings.Contains(v.Reason, c.reason) {
			t.Errorf("%s: reason %q, want it to say %q", c.name, v.Reason, c.reason)
		}
		if v.Criterion.Type != c.c.Type {
			t.Errorf("%s: the verdict names criterion %+v", c.name, v.Criterion)
		}
	}
}

// TestTranscriptText: the judge reads each item on its line, numbered as the evidence
// numbers them, tool-only replies left out.
func TestTranscriptText(t *testing.T) {
	got := agenttest.TranscriptText(conversationItems())
	for _, want := range []string{"[0] Agent: Hello, Trattoria here!\n", "[1] Caller: A table for two", "[5] Tool: book(", "[7] Agent: You're booked"} {
		if !strings.Contains(got, want) {
			t.Errorf("transcript lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "[2]") {
		t.Errorf("an agent item without text is shown:\n%s", got)
	}
}
