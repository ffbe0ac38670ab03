package openapi

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// eventPayloads is the one place that says what each event type's data member holds: a
// Go value (its type's schema) or a hand-written schema for the payloads the services
// build as small maps. TestEventPayloadsCoverEventTypes fails when an event type of
// data.EventTypes has no entry here.
var eventPayloads = map[string]any{
	data.EventAgentCreated:   data.Agent{},
	data.EventAgentUpdated:   data.Agent{},
	data.EventAgentDeleted:   data.Agent{},
	data.EventAgentPublished: data.Agent{},
	data.EventAgentRestored:  data.Agent{},
	// The version deleted, as GET …/versions/{version_number} showed it.
	data.EventAgentVersionDeleted: data.AgentVersion{},

	data.EventRolloutUpdated:    data.Rollout{},
	data.EventRolloutEnded:      data.Rollout{},
	data.EventRolloutRolledBack: data.Rollout{},

	data.EventKnowledgeBaseCreated:   data.KnowledgeBase{},
	data.EventKnowledgeBaseUpdated:   data.KnowledgeBase{},
	data.EventKnowledgeBaseDeleted:   data.KnowledgeBase{},
	data.EventKnowledgeSourceIndexed: sourceEventPayload,
	data.EventKnowledgeSourceFailed:  sourceEventPayload,

	data.EventNumberCreated: data.Number{},
	data.EventNumberUpdated: data.Number{},
	data.EventNumberDeleted: data.Number{},

	data.EventCallRegistered: data.Call{},
	data.EventCallStarted:    data.Call{},
	data.EventCallEnded:      data.Call{},
	data.EventCallAnalyzed:   data.Call{},
	// The call with its analysis_error.
	data.EventCallAnalysisFailed: data.Call{},

	// The job as GET /api/v1/jobs/{job_id} shows it, and the records its work concerns:
	// inline, as the other event-only payloads (a JobFailure component, named by the
	// webhooks section alone, is pruned by oapi-codegen, which then cannot build).
	data.EventJobFailed: map[string]any{"description": "The job that failed for good, as GET /api/v1/jobs/{job_id} shows it, and the records its work concerns.",
		"allOf": []any{schemaOf(data.Job{}), objectPayload("The records the job's work concerns; null when its kind names none.", map[string]any{
			"knowledge_base_id": nullableID("The knowledge base."), "campaign_id": nullableID("The campaign."),
			"call_id": nullableID("The call."), "test_run_id": nullableID("The test run.")})}},

	data.EventWebhookTest: objectPayload("A test delivery asked for with POST /api/v1/webhooks/{webhook_id}/test.",
		map[string]any{"webhook_id": idString("The webhook tested."), "message": map[string]any{"type": "string"}}),

	data.EventWorkspaceUpdated:     data.Workspace{},
	data.EventWorkspaceUserAdded:   data.WorkspaceUser{},
	data.EventWorkspaceUserUpdated: data.WorkspaceUser{},
	data.EventWorkspaceUserRemoved: data.WorkspaceUser{},

	data.EventAPIKeyCreated: data.WorkspaceAPIKey{},
	data.EventAPIKeyRevoked: data.WorkspaceAPIKey{},

	data.EventWebhookCreated:       data.Webhook{},
	data.EventWebhookUpdated:       data.Webhook{},
	data.EventWebhookDeleted:       data.Webhook{},
	data.EventWebhookSecretRotated: data.Webhook{},

	data.EventUserLogin:           loginEventPayload,
	data.EventUserLoginFailed:     loginEventPayload,
	data.EventUserPasswordChanged: objectPayload("A user changed their password.", map[string]any{"user_id": idString("The user.")}),
	data.EventSubscriptionUpdated: data.Subscription{},

	data.EventWorkspaceExported: objectPayload("The workspace was exported: counts only, never a record or an api_key.",
		withCounts(map[string]any{"include_secrets": map[string]any{"type": "boolean"}})),
	data.EventWorkspaceImported: data.ImportResult{},
	// Inline like the other event-only payloads: a component that only the webhooks
	// section names is pruned by generators that walk the paths (oapi-codegen).
	data.EventRetentionSwept: objectPayload("What one retention sweep deleted in the workspace, counts only.", map[string]any{
		"calls_deleted":           map[string]any{"type": "integer", "minimum": 0, "description": "Calls deleted for their workspace's or agent's retention."},
		"knowledge_files_deleted": map[string]any{"type": "integer", "minimum": 0, "description": "Knowledge base files deleted."},
		"calls_on_hold":           map[string]any{"type": "integer", "minimum": 0, "description": "Expired calls kept because they are on legal hold."},
		"conversations_deleted":   map[string]any{"type": "integer", "minimum": 0, "description": "Conversations deleted with the calls they became."},
		"campaigns_deleted":       map[string]any{"type": "integer", "minimum": 0, "description": "Finished campaigns deleted, with their recipients, for the workspace's retention_days."},
	}),
	data.EventPriceTableUpdated: data.PriceTable{},
	data.EventBackupDownloaded: objectPayload("An instance admin downloaded a backup.", map[string]any{
		"archive":             map[string]any{"type": "string", "description": "The archive's file name."},
		"files_included":      map[string]any{"type": "boolean"},
		"secret_key_included": map[string]any{"type": "boolean"},
	}),
}

// sourceEventPayload is knowledge_base.source_indexed's and source_failed's data: the
// source item, not the whole knowledge base (docs/webhooks.md).
var sourceEventPayload = objectPayload("A source finished indexing, or failed.", map[string]any{
	"knowledge_base_id": idString("The knowledge base."),
	"source_type":       map[string]any{"type": "string", "enum": []string{data.SourceTexts, data.SourceURLs, data.SourceFiles}},
	"source": map[string]any{"description": "The source item, by source_type.", "oneOf": []any{
		schemaOf(data.TextSource{}), schemaOf(data.URLSource{}), schemaOf(data.FileSource{}),
	}},
})

// loginEventPayload is user.login's and user.login_failed's data.
var loginEventPayload = objectPayload("A login, or a failed one, of a known user.", map[string]any{
	"user_id":      idString("The user."),
	"email":        map[string]any{"type": "string", "format": "email"},
	"workspace_id": idString("The workspace the login asked for."),
})

// withCounts adds data.ExportCounts' members (what workspace.exported embeds) to props.
func withCounts(props map[string]any) map[string]any {
	t := reflect.TypeFor[data.ExportCounts]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		props[name] = map[string]any{"type": "integer", "minimum": 0}
	}
	return props
}

// schemaRef marks a Go value inside a hand-written payload schema, replaced by its
// component reference when the document is built.
type schemaRef struct{ v any }

func schemaOf(v any) schemaRef { return schemaRef{v} }

func idString(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

// nullableID is a member holding a record's id, or null.
func nullableID(desc string) map[string]any {
	return map[string]any{"type": []any{"string", "null"}, "description": desc}
}

// objectPayload is a payload with every member present.
func objectPayload(desc string, props map[string]any) map[string]any {
	required := make([]string, 0, len(props))
	for k := range props {
		required = append(required, k)
	}
	slices.Sort(required)
	return map[string]any{"type": "object", "description": desc, "required": required, "properties": props}
}

// EventTypesWithPayload lists the event types eventPayloads describes, for the test that
// every event type has one.
func EventTypesWithPayload() []string {
	out := make([]string, 0, len(eventPayloads))
	for k := range eventPayloads {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// eventSchemaName names an event type's delivery: agent.created is AgentCreatedEvent.
func eventSchemaName(typ string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(typ, func(r rune) bool { return r == '.' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String() + "Event"
}

// payloadSchema is the schema of a payload entry, Go values made references.
func payloadSchema(g *schemaGen, p any) any {
	switch x := p.(type) {
	case schemaRef:
		return g.schema(reflect.TypeOf(x.v), modeOut)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[k] = payloadSchema(g, v)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = payloadSchema(g, v)
		}
		return out
	case string, []string, bool, int:
		return x
	}
	return g.schema(reflect.TypeOf(p), modeOut)
}

// markEventOutputs records the payload types as response types, so that their schemas
// are named as the routes' records are.
func markEventOutputs(g *schemaGen) {
	for _, p := range eventPayloads {
		switch x := p.(type) {
		case map[string]any:
		default:
			g.markOutput(reflect.TypeOf(x))
		}
	}
}

// webhookHeaders are the headers every delivery carries (docs/webhooks.md).
var webhookHeaders = []any{
	map[string]any{"name": "webhook-id", "in": "header", "required": true, "schema": map[string]any{"type": "string"},
		"description": "The event id: the same on every attempt and replay, so use it to drop duplicates."},
	map[string]any{"name": "webhook-timestamp", "in": "header", "required": true, "schema": map[string]any{"type": "integer", "format": "int64"},
		"description": "When this attempt was signed, in Unix seconds."},
	map[string]any{"name": "webhook-signature", "in": "header", "required": true, "schema": map[string]any{"type": "string"},
		"description": "`v1,` and the base64 of HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64-decoded part of the secret after `whsec_`; may hold several space-separated signatures."},
}

// webhooks builds the document's webhooks section, one entry per event type, each with
// its envelope schema.
func webhooks(g *schemaGen) map[string]any {
	out := map[string]any{}
	for _, typ := range data.EventTypes {
		p, ok := eventPayloads[typ]
		if !ok {
			panic(fmt.Sprintf("openapi: event type %s has no entry in eventPayloads", typ))
		}
		name := eventSchemaName(typ)
		// The envelope is inline rather than a component: oapi-codegen prunes the
		// components that no path refers to, webhooks' included, and then its webhook
		// code names types it never declared.
		envelope := map[string]any{
			"type":        "object",
			"title":       name,
			"description": "The body of a " + typ + " delivery.",
			"required":    []string{"id", "type", "created_at", "workspace_id", "actor", "data"},
			"properties": map[string]any{
				"id":           idString("The event id, also in the webhook-id header."),
				"type":         map[string]any{"type": "string", "enum": []string{typ}},
				"created_at":   map[string]any{"type": "string", "format": "date-time"},
				"workspace_id": idString("The workspace the event happened in."),
				"actor":        g.ref(reflect.TypeFor[data.Actor](), modeOut),
				"data":         payloadSchema(g, p),
			},
		}
		out[typ] = map[string]any{"post": map[string]any{
			"operationId": "webhook" + strings.TrimSuffix(name, "Event"),
			"summary":     "Delivery of " + typ,
			"tags":        []string{"Webhook"},
			"security":    []any{},
			"parameters":  webhookHeaders,
			"requestBody": map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": envelope},
			}},
			"responses": map[string]any{
				"200": map[string]any{"description": "Any 2xx answer within 10 seconds is a success."},
				"400": map[string]any{"description": "Any other answer, a redirect or a timeout is a failed attempt, retried on the schedule of docs/webhooks.md."},
			},
		}}
	}
	return out
}
