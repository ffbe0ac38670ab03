package server_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestOpenAPIWebhookPayloadsMatchRecordedEvents records events (an export's too) on a real server and checks
// each one's data against the webhooks section: every member the payload schema requires is
// there, and every member there is one the schema defines.
func TestOpenAPIWebhookPayloadsMatchRecordedEvents(t *testing.T) {
	_, doc := openapiDocument(t)
	schemas := dig(t, doc, "components", "schemas").(map[string]any)
	e := newEnv(t)
	tok := e.Owner.Token
	expect(t, e.do("POST", "/api/v1/agents", tok, map[string]any{"name": "Front desk"}), 201)
	expect(t, e.do("POST", "/api/v1/numbers", tok, map[string]any{"phone_number": "+14155550100", "provider": "twilio"}), 201)
	hook := e.do("POST", "/api/v1/webhooks", tok, map[string]any{"url": "https://example.com/hook", "events": []string{"agent.created"}})
	expect(t, hook, 201)
	hookID, _ := hook.JSON()["data"].(map[string]any)["id"].(string)
	if r := e.do("POST", "/api/v1/webhooks/"+hookID+"/test", tok, nil); r.Status >= 300 {
		t.Fatalf("webhook test: %d %s", r.Status, r.Body)
	}
	expect(t, e.do("POST", "/api/v1/knowledge-bases", tok, map[string]any{"name": "FAQ",
		"texts": []any{map[string]any{"title": "Hours", "content": "We open at nine."}}}), 201)
	if r := e.do("GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/export", tok, nil); r.Status != 200 {
		t.Fatalf("export: %d %s", r.Status, r.Body)
	}

	seen := map[string]bool{}
	err := e.DB.View(context.Background(), func(tx service.Tx) error {
		return tx.EventsNewestFirst(e.Owner.WorkspaceID, func(ev *data.Event) (bool, error) {
			schema := dig(t, doc, "webhooks", ev.Type, "post", "requestBody", "content", "application/json", "schema", "properties", "data").(map[string]any)
			if ref, ok := schema["$ref"].(string); ok {
				schema = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
			}
			props, ok := schema["properties"].(map[string]any)
			if !ok {
				return true, nil // an open payload
			}
			var payload map[string]any
			if err := json.Unmarshal(ev.Data, &payload); err != nil {
				t.Errorf("%s: data is not an object: %s", ev.Type, ev.Data)
				return true, nil
			}
			for _, r := range schema["required"].([]any) {
				if _, ok := payload[r.(string)]; !ok {
					t.Errorf("%s: data has no %s, which the document requires: %s", ev.Type, r, ev.Data)
				}
			}
			for k := range payload {
				if props[k] == nil {
					t.Errorf("%s: data has %s, which the document does not define", ev.Type, k)
				}
			}
			seen[ev.Type] = true
			return true, nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{data.EventAgentCreated, data.EventNumberCreated, data.EventWebhookCreated, data.EventWebhookTest, data.EventKnowledgeBaseCreated, data.EventWorkspaceExported} {
		if !seen[typ] {
			t.Errorf("no %s event was checked (checked: %v)", typ, slices.Sorted(func(yield func(string) bool) {
				for k := range seen {
					if !yield(k) {
						return
					}
				}
			}))
		}
	}
}
