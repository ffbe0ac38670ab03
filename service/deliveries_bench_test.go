package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// agentLikePayload is about the size and shape of an agent.updated event's payload: an
// agent with ten tools, every tool with all its members.
func agentLikePayload(i int) json.RawMessage {
	tools := make([]map[string]any, 10)
	for t := range tools {
		tools[t] = map[string]any{"name": fmt.Sprint("tool_", t), "type": "custom_function", "description": "Look the order up.",
			"api_endpoint": "https://api.example.com/orders", "http_method": "POST", "timeout": 5000, "content": nil,
			"content_type": nil, "custom_sip_headers": map[string]string{}, "phone_directory": []any{}, "variables": []any{}}
	}
	raw, _ := json.Marshal(map[string]any{"id": fmt.Sprint("agt_", i), "workspace_id": "ws_1", "name": fmt.Sprint("Agent ", i),
		"llm_config":    map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "tools": tools},
		"prompt_config": map[string]any{"prompt": "You are support for an online shop. Be brief.", "first_speaker": "ai"}})
	return raw
}

// BenchmarkFanOut: one fan-out transaction of 64 agent-sized events, in a workspace with
// no webhook (the payloads need not be read) and in one with a webhook that takes them.
func BenchmarkFanOut(b *testing.B) {
	for _, withHook := range []bool{false, true} {
		b.Run(map[bool]string{false: "no_webhook", true: "webhook"}[withHook], func(b *testing.B) {
			db := testkit.OpenEngine(b)
			svc := testkit.Services(b, db, nil)
			ctx := data.WithPrincipal(context.Background(), &data.Principal{UserID: "usr_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6", WorkspaceID: "ws_1", Role: data.RoleDeveloper})
			if withHook {
				if _, _, err := svc.Webhooks.CreateWebhook(ctx, data.WebhookCreate{URL: "https://hooks.example.com/in", Events: []string{data.EventAgentUpdated}}); err != nil {
					b.Fatal(err)
				}
			}
			gen := data.NewIDGen()
			payloads := make([]json.RawMessage, 64)
			for i := range payloads {
				payloads[i] = agentLikePayload(i)
			}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				if err := db.Update(ctx, func(tx service.Tx) error {
					for i, p := range payloads {
						e := &data.Event{ID: gen.New(data.PrefixEvent), Type: data.EventAgentUpdated, WorkspaceID: "ws_1", Data: p, Hash: fmt.Sprint("h", i)}
						if err := tx.AppendEvent(e); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if n, err := svc.Deliveries.FanOut(ctx, 64); err != nil || n != 64 {
					b.Fatalf("fan-out: %d, %v", n, err)
				}
			}
		})
	}
}
