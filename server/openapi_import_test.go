package server_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/validate"
)

// TestOpenAPIImportBounds: the import document's schemas state every bound the import
// enforces (validate/export.go, tested at their edges in validate's bounds tests), from
// the same constants. The lists of knowledge bases and webhooks, the agents' keys, tests
// and versions and the knowledge bases' keys had none, though the import refused past them.
func TestOpenAPIImportBounds(t *testing.T) {
	_, doc := openapiDocument(t)
	schemas := dig(t, doc, "components", "schemas").(map[string]any)
	checks := []struct {
		schema, field, keyword string
		want                   int
	}{
		{"WorkspaceExport", "agents", "maxItems", validate.MaxImportItems},
		{"WorkspaceExport", "knowledge_bases", "maxItems", validate.MaxImportItems},
		{"WorkspaceExport", "numbers", "maxItems", validate.MaxImportItems},
		{"WorkspaceExport", "webhooks", "maxItems", validate.MaxImportItems},
		{"WorkspaceExport", "suppressions", "maxItems", validate.MaxSuppressions},
		{"ExportWorkspace", "name", "maxLength", validate.MaxNameLen},
		{"ExportWorkspace", "description", "maxLength", validate.MaxDescriptionLen},
		{"ExportAgent", "key", "maxLength", validate.MaxExportKey},
		{"ExportAgent", "name", "maxLength", validate.MaxAgentName},
		{"ExportAgent", "versions", "maxItems", validate.MaxVersionsPerAgent},
		{"ExportAgent", "tests", "maxItems", validate.MaxTestsPerAgent},
		{"ExportAgent", "max_concurrent_calls", "maximum", validate.MaxConcurrentCalls},
		{"ExportAgentTest", "max_turns", "maximum", validate.MaxTestMaxTurns},
		{"ExportAgentTest", "repeat", "maximum", validate.MaxTestRepeat},
		{"ExportAgentTest", "criteria", "maxItems", validate.MaxTestCriteria},
		{"ExportKnowledgeBase", "key", "maxLength", validate.MaxExportKey},
		{"ExportKnowledgeBase", "name", "maxLength", validate.MaxNameLen},
		{"ExportFile", "filename", "maxLength", validate.MaxFilename},
		{"ExportNumber", "nickname", "maxLength", validate.MaxNicknameLen},
		{"ExportWebhook", "url", "maxLength", validate.MaxWebhookURLLen},
		{"ExportWebhook", "description", "maxLength", validate.MaxDescriptionLen},
		{"ExportSuppression", "reason", "maxLength", validate.MaxSuppressionReason},
	}
	for _, c := range checks {
		prop, _ := dig(t, schemas, c.schema, "properties", c.field).(map[string]any)
		if got, _ := prop[c.keyword].(float64); got != float64(c.want) {
			t.Errorf("%s.%s %s: the document says %v, the import enforces %d", c.schema, c.field, c.keyword, prop[c.keyword], c.want)
		}
	}
	for _, schema := range []string{"ExportAgent", "ExportKnowledgeBase"} {
		if got := dig(t, schemas, schema, "properties", "key", "pattern"); got != validate.ExportKeyPattern {
			t.Errorf("%s.key pattern %v, want %s", schema, got, validate.ExportKeyPattern)
		}
	}
}
