package openapi

import (
	"fmt"
	"maps"

	"github.com/voiceapi/voiceapi/validate"
)

// The import document's bounds (validate/export.go): each list and member the import
// checks, stated from the same constants, so the document a client validates against
// refuses what the import refuses.
func init() {
	exportKey := fieldRule{MinLength: 1, MaxLength: validate.MaxExportKey, Pattern: validate.ExportKeyPattern}
	for _, list := range []string{"knowledge_bases", "webhooks"} {
		fieldRules["WorkspaceExport"][list] = fieldRule{MaxItems: validate.MaxImportItems}
	}
	fieldRules["ExportAgent"] = map[string]fieldRule{
		"key":                  exportKey.with(true, "The agent's key in this document: numbers and nothing else name it by this."),
		"name":                 fieldRule{MinLength: 1, MaxLength: validate.MaxAgentName}.with(true, ""),
		"versions":             {MaxItems: validate.MaxVersionsPerAgent, Description: "Published versions, version_number unique."},
		"tests":                {MaxItems: validate.MaxTestsPerAgent, Description: "The agent's tests, names unique; none when absent."},
		"max_concurrent_calls": between(1, validate.MaxConcurrentCalls).with(false, "The agent's bound on open calls; none when absent."),
	}
	fieldRules["ExportKnowledgeBase"] = map[string]fieldRule{
		"key":  exportKey.with(true, "The knowledge base's key in this document: agents' knowledge_base_ids name it by this."),
		"name": fieldRule{MinLength: 1, MaxLength: validate.MaxNameLen}.with(true, ""),
	}
	fieldRules["ExportNumber"] = map[string]fieldRule{"nickname": maxLen(validate.MaxNicknameLen)}
	fieldRules["ExportWebhook"] = map[string]fieldRule{
		"url":         fieldRule{MaxLength: validate.MaxWebhookURLLen, Format: "uri"}.with(true, ""),
		"description": maxLen(validate.MaxDescriptionLen),
	}
	// A document's test is checked as stored: max_turns and repeat take no default.
	tests := maps.Clone(agentTestRules)
	tests["max_turns"] = between(validate.MinTestMaxTurns, validate.MaxTestMaxTurns).with(true, "The caller's turns at most.")
	tests["repeat"] = between(validate.MinTestRepeat, validate.MaxTestRepeat).with(true, "Runs of the test in a run.")
	fieldRules["ExportAgentTest"] = tests
	fieldRules["ExportWorkspace"]["name"] = maxLen(validate.MaxNameLen)
	fieldRules["ExportWorkspace"]["description"] = maxLen(validate.MaxDescriptionLen)
	redaction := fieldRules["RedactionRule"]["pattern"]
	redaction.Description += fmt.Sprintf(" At most %d bytes of UTF-8 (maxLength counts characters: a pattern of wider characters is refused sooner).", validate.MaxRedactionPatternBytes)
	fieldRules["RedactionRule"]["pattern"] = redaction
}
