package llm_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

// BenchmarkComplete is an adapter's cost per completion against a stand-in that answers
// at once (over loopback HTTP, the stand-in's own checks included): a turn with a system
// prompt, six messages and two tools, answered with a sentence and a tool call.
func BenchmarkComplete(b *testing.B) {
	req := llm.Request{
		System: "You are the front desk of Chez Léa. Be brief and friendly.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "Hi, I would like a table tonight."},
			{Role: llm.RoleAssistant, Content: "Of course. For how many people, and at what time?"},
			{Role: llm.RoleUser, Content: "Two people at seven, please."},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "book_table", Arguments: `{"people":2,"time":"19:00"}`}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: `{"confirmation":"B-42"}`},
			{Role: llm.RoleUser, Content: "Thanks, that's all."},
		},
		Tools: []llm.Tool{bookTable, endCall},
	}
	reply := llmtest.Reply{Text: "You're booked for two at seven, confirmation B-42. Goodbye!", ToolCalls: []llm.ToolCall{{Name: "end_call", Arguments: "{}"}}}
	for _, p := range allProviders {
		for _, streamed := range []bool{false, true} {
			name := p + map[bool]string{false: "/whole", true: "/streamed"}[streamed]
			b.Run(name, func(b *testing.B) {
				s := llmtest.New(b, p)
				c, err := llm.New(s.Config(), s.Options())
				if err != nil {
					b.Fatal(err)
				}
				s.Respond(func(llmtest.Request) llmtest.Reply { return reply })
				var onText func(string) error
				if streamed {
					onText = func(string) error { return nil }
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := c.Complete(context.Background(), req, onText); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
