package server_test

import (
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/openapi"
)

// TestOpenAPIEventPayloadsCoverEventTypes fails when an event type has no payload entry,
// or an entry names an event type that no longer exists.
func TestOpenAPIEventPayloadsCoverEventTypes(t *testing.T) {
	described := openapi.EventTypesWithPayload()
	for _, typ := range data.EventTypes {
		if !slices.Contains(described, typ) {
			t.Errorf("event type %s has no payload in openapi's eventPayloads", typ)
		}
	}
	for _, typ := range described {
		if !slices.Contains(data.EventTypes, typ) {
			t.Errorf("openapi describes event type %s, which data.EventTypes does not list", typ)
		}
	}
}

// TestOpenAPIWebhooks checks the webhooks section: one entry per event type, whose body is
// the envelope with a typed data member, and the three signature headers.
func TestOpenAPIWebhooks(t *testing.T) {
	_, doc := openapiDocument(t)
	hooks, _ := doc["webhooks"].(map[string]any)
	if len(hooks) != len(data.EventTypes) {
		t.Fatalf("webhooks has %d entries, data.EventTypes %d", len(hooks), len(data.EventTypes))
	}
	for _, typ := range data.EventTypes {
		post := dig(t, hooks, typ, "post").(map[string]any)
		var headers []string
		for _, p := range post["parameters"].([]any) {
			headers = append(headers, p.(map[string]any)["name"].(string))
		}
		if !slices.Equal(headers, []string{"webhook-id", "webhook-timestamp", "webhook-signature"}) {
			t.Errorf("%s: headers %v", typ, headers)
		}
		envelope := dig(t, post, "requestBody", "content", "application/json", "schema").(map[string]any)
		props := envelope["properties"].(map[string]any)
		for _, m := range []string{"id", "type", "created_at", "workspace_id", "actor", "data"} {
			if props[m] == nil {
				t.Errorf("%s: envelope has no %s", typ, m)
			}
		}
		if got := dig(t, props, "type", "enum").([]any); len(got) != 1 || got[0] != typ {
			t.Errorf("%s: type enum %v", typ, got)
		}
		d := props["data"].(map[string]any)
		if d["$ref"] == nil && d["properties"] == nil && d["description"] == nil {
			t.Errorf("%s: data is untyped: %v", typ, d)
		}
	}
	for typ, want := range map[string]string{
		data.EventAgentCreated: "Agent", data.EventCallEnded: "Call", data.EventWebhookSecretRotated: "Webhook",
		data.EventWorkspaceUserAdded: "WorkspaceUser", data.EventAPIKeyRevoked: "WorkspaceAPIKey",
	} {
		got := dig(t, hooks, typ, "post", "requestBody", "content", "application/json", "schema", "properties", "data", "$ref")
		if got != "#/components/schemas/"+want {
			t.Errorf("%s: data is %v, want %s", typ, got, want)
		}
	}
}
