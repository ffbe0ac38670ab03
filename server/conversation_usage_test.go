package server_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// The call an ended conversation becomes carries the conversation's tokens as usage.llm
// with the agent's provider and model, priced under the workspace's price table like a
// runtime's usage (docs/analysis.md, "Usage"): so conversations count in the cost figures.
func TestConversationCallCarriesUsageAndCost(t *testing.T) {
	e := newConvEnv(t, nil)
	model := e.stand.LLMConfig().Model
	// 1 USD per million input tokens and 2 per million output: a token costs 1 and 2
	// micro-dollars, so the expected total is input + 2 × output exactly.
	testkit.Expect(t, e.Do("PUT", "/api/v1/price-table", e.tok, map[string]any{"currency": "USD", "prices": []any{
		map[string]any{"provider": "internal", "model": "*", "unit": "llm_input_1m_tokens", "price": "1"},
		map[string]any{"provider": "internal", "model": "*", "unit": "llm_output_1m_tokens", "price": "2"},
	}}), 200)
	agent := e.createAgent(t, map[string]any{"name": "Priced"})
	id := e.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	e.stand.Queue(llmtest.Text("Hello there."))
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+id+"/messages", e.tok, map[string]any{"content": "hi"}), 200)
	used := e.Do("GET", "/api/v1/conversations/"+id, e.tok, nil).Data()["usage"].(map[string]any)
	in, out := used["input_tokens"].(float64), used["output_tokens"].(float64)
	if in <= 0 || out <= 0 {
		t.Fatalf("conversation usage = %v", used)
	}
	end := e.Do("POST", "/api/v1/conversations/"+id+"/end", e.tok, nil)
	testkit.Expect(t, end, 200)
	callID := end.Data()["id"].(string) // the end answers the call
	call := e.Do("GET", "/api/v1/calls/"+callID, e.tok, nil).Data()
	usage, _ := call["usage"].(map[string]any)
	llm, _ := usage["llm"].([]any)
	if len(llm) != 1 {
		t.Fatalf("call usage = %v", call["usage"])
	}
	line := llm[0].(map[string]any)
	if line["provider"] != "internal" || line["model"] != model || line["input_tokens"] != in || line["output_tokens"] != out {
		t.Errorf("usage.llm = %v, want internal %s %v in %v out", line, model, in, out)
	}
	cost, _ := call["cost"].(map[string]any)
	if cost == nil || cost["currency"] != "USD" || cost["total_micros"] != in+2*out {
		t.Errorf("cost = %v, want USD %v micros", call["cost"], in+2*out)
	}
}
