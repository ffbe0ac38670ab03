package server_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// startBenchAgent is benchBody (every group, 20 tools) whose prompt, welcome message and
// custom functions use variables, with a default for one: what a start substitutes.
func startBenchAgent() map[string]any {
	body := benchBody()
	body["prompt_config"] = map[string]any{"prompt": "You are support for {{shop}}. The caller is {{customer_name}} ({{caller_number}}); it is {{current_time}}.",
		"first_speaker": "ai", "welcome_message_type": "static", "welcome_message": "Hi {{customer_name}}, {{shop}} here.",
		"default_variables": map[string]any{"shop": "Acme"}, "timezone": "Europe/Paris"}
	for _, t := range body["llm_config"].(map[string]any)["tools"].([]any) {
		if tool := t.(map[string]any); tool["type"] == "custom_function" {
			tool["api_endpoint"] = "https://api.example.com/{{shop}}/orders"
		}
	}
	return body
}

// BenchmarkCallStart is POST /api/v1/calls/start beside GET /api/v1/agents/{agent_id} and a
// registration (POST /api/v1/calls), through the whole HTTP stack, VOICEAPI_BENCH_CLIENTS
// (16) requests in flight, on the engine VOICEAPI_TEST_BACKEND names (bbolt with fsync on,
// as served); start-limited runs under a concurrency limit, so every start counts the
// open calls (testkit.CallStartBench). Each reports ops/s and the p50 and p99 of one request.
// go test ./server -run x -bench BenchmarkCallStart -benchtime 2000x
func BenchmarkCallStart(b *testing.B) {
	s := testkit.NewServer(b, func(o *bolt.Options) { o.NoSync = false })
	testkit.CallStartBench(b, []*testkit.Server{s}, startBenchAgent(), func(limits map[string]int64) {
		if _, err := s.Svc.Subscriptions.SetSubscription(context.Background(), s.Owner.WorkspaceID, data.SubscriptionSet{Limits: limits}); err != nil {
			b.Fatal(err)
		}
	})
}
