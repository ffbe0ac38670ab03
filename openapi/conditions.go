package openapi

import (
	"fmt"
	"slices"

	"github.com/voiceapi/voiceapi/data"
)

// condition is a required-when rule of validate/ that JSON Schema can state: when member
// If equals Is, the members Then must be present.
type condition struct {
	If   string
	Is   any
	Then []string
}

// conditions are validate/'s required-when rules (agent_llm.go, agent_groups.go), by input
// schema, as far as the body alone decides them. The server checks the agent as it will be
// stored: a member the body leaves out is taken from the stored agent or, on create, from
// the defaults, and a change of provider clears the provider's own members. So a rule
// whose required member has a default is left out, since the body may omit it: temperature
// (bedrock_claude, internal), elevenlabs' voice_id and streaming_latency (the default
// provider's), prompt_config's welcome_message (static) and ai_speak_wait_time
// (ai_speak_after_silence). TestOpenAPIConditionsAreEnforced probes every rule here.
var conditions = map[string][]condition{
	"LLMConfigInput": {
		{"provider", data.LLMAzure, []string{"deployment", "endpoint", "api_version"}},
		{"provider", data.LLMBedrockClaude, []string{"region", "max_tokens"}},
		{"provider", data.LLMInternal, []string{"base_url"}},
	},
	"TTSConfigInput": {
		{"provider", data.TTSCartesia, []string{"voice_id"}},
		{"provider", data.TTSRime, []string{"speaker", "streaming_latency"}},
	},
	"ToolInput": {
		{"type", data.ToolTransferCall, []string{"phone_directory"}},
		{"type", data.ToolSendSMS, []string{"content_type", "content"}},
		{"type", data.ToolExtractDynamicVariable, []string{"variables"}},
	},
	"ToolVariableInput": {
		{"type", "enum", []string{"choices"}},
	},
	"AnalysisFieldInput": {
		{"type", data.AnalysisEnum, []string{"choices"}},
	},
}

// addConditions adds each schema's conditions as allOf of if/then blocks. A schema or a
// member the table names that the document lacks fails Build.
func addConditions(schemas map[string]any) {
	for name, conds := range conditions {
		s, ok := schemas[name].(map[string]any)
		if !ok {
			panic(fmt.Sprintf("openapi: conditions name schema %s, which the document lacks", name))
		}
		props, _ := s["properties"].(map[string]any)
		var all []any
		for _, c := range conds {
			for _, m := range append([]string{c.If}, c.Then...) {
				if props[m] == nil {
					panic(fmt.Sprintf("openapi: conditions name %s.%s, which the schema lacks", name, m))
				}
			}
			// then names its members as properties too: a required member a schema does
			// not define reads as a typo to linters.
			thenProps := map[string]any{}
			for _, m := range c.Then {
				thenProps[m] = map[string]any{"description": fmt.Sprintf("Required when %s is %v.", c.If, c.Is)}
			}
			all = append(all, map[string]any{
				"if": map[string]any{"required": []string{c.If},
					"properties": map[string]any{c.If: map[string]any{"const": c.Is}}},
				"then": map[string]any{"required": slices.Clone(c.Then), "properties": thenProps},
			})
		}
		s["allOf"] = all
	}
}
