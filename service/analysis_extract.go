package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/validate"
)

// Extraction: the agent's model fills a call's analysis through one forced tool call
// whose parameters are the analysis_config's fields as a JSON schema, never free text
// read by hand (docs/analysis.md, "Extraction"). An answer that does not fit is sent
// back once with what was wrong; a second misfit is the call's analysis error.

// analysisToolName is the function the model must call with the analysis.
const analysisToolName = "record_analysis"

// analysisPrompt is the system prompt of an extraction.
const analysisPrompt = "You analyze a finished phone call between a voice AI agent and a caller. " +
	"Read the transcript and call the record_analysis function exactly once, with a value for each of its parameters " +
	"that the transcript supports. Give null to a parameter the transcript does not tell, unless the parameter is required."

// analysisSchema is the JSON schema of the tool's parameters: a property per field
// (its type, enum choices, a date's format, the field's description), call_successful
// when the configuration has a success criterion, summary when it asks for one. A field
// that is not required may be null; nothing else may be given.
func analysisSchema(cfg *data.AnalysisConfig) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, f := range cfg.Fields {
		p := map[string]any{"description": f.Description}
		switch f.Type {
		case data.AnalysisNumber:
			p["type"] = "number"
		case data.AnalysisBoolean:
			p["type"] = "boolean"
		case data.AnalysisEnum:
			p["type"] = "string"
			p["enum"] = slices.Clone(f.Choices)
		case data.AnalysisDate:
			p["type"], p["format"] = "string", "date"
			p["description"] = f.Description + " (a date, YYYY-MM-DD)"
		default:
			p["type"] = "string"
		}
		if !f.Required {
			p["type"] = []any{p["type"], "null"}
			if e, ok := p["enum"].([]string); ok {
				p["enum"] = append(toAny(e), nil)
			}
		}
		props[f.Name] = p
		required = append(required, f.Name) // present, null when not required and unknown
	}
	if cfg.SuccessCriterion != nil {
		props[data.AnalysisKeySuccessful] = map[string]any{"type": "boolean",
			"description": "Whether the call met this success criterion: " + *cfg.SuccessCriterion}
		required = append(required, data.AnalysisKeySuccessful)
	}
	if cfg.Summary {
		props[data.AnalysisKeySummary] = map[string]any{"type": "string",
			"description": fmt.Sprintf("A summary of the call in a few sentences (at most %d characters).", validate.MaxAnalysisText)}
		required = append(required, data.AnalysisKeySummary)
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func toAny(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// transcriptText is the call's transcript as the model reads it, an utterance a line.
func transcriptText(c *data.Call) string {
	var b strings.Builder
	b.WriteString("Transcript of the call:\n")
	if len(c.Transcript) == 0 {
		b.WriteString("(the call has no transcript)\n")
	}
	for _, it := range c.Transcript {
		fmt.Fprintf(&b, "%s: %s\n", it.Role, it.Content)
	}
	return b.String()
}

// errAnalysisMisfit is a model's answer that did not fit the schema, twice.
type errAnalysisMisfit struct{ reason string }

func (e errAnalysisMisfit) Error() string {
	return "the model's analysis did not fit the fields twice: " + e.reason
}

// extraction is what asking the model gave: the analysis (nil on a misfit or a provider
// failure) and the tokens it took, which count whatever the outcome.
type extraction struct {
	analysis map[string]any
	usage    llm.Usage
}

// extract asks model for the analysis of c under cfg: a forced call of the analysis
// tool, once more with the faults when its arguments do not fit. The error is the
// provider's (*llm.Error) or errAnalysisMisfit.
func extract(ctx context.Context, model llm.Client, lc data.LLMConfig, cfg *data.AnalysisConfig, c *data.Call) (extraction, error) {
	zero := 0.0
	req := llm.Request{
		System:      analysisPrompt,
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: transcriptText(c)}},
		Tools:       []llm.Tool{{Name: analysisToolName, Description: "Records the analysis of the call.", Parameters: analysisSchema(cfg)}},
		ToolChoice:  llm.ToolChoice{Mode: "tool", Name: analysisToolName},
		Temperature: &zero, // the same transcript, the same analysis
	}
	if lc.MaxTokens != nil {
		req.MaxTokens = *lc.MaxTokens
	}
	var out extraction
	var misfit string
	for attempt := 0; attempt < 2; attempt++ {
		reply, err := model.Complete(ctx, req, nil)
		if err != nil {
			return out, err
		}
		out.usage = out.usage.Add(reply.Usage)
		analysis, call, why := fitAnalysis(reply, cfg)
		if why == "" {
			out.analysis = analysis
			return out, nil
		}
		misfit = why
		// The answer goes back with what was wrong: as the tool's error when the model
		// called it, else as a request to call it.
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: reply.Text, ToolCalls: reply.ToolCalls})
		if call != nil {
			for _, tc := range reply.ToolCalls {
				msg := "Not recorded: another call answers."
				if tc.ID == call.ID {
					msg = "Not recorded: " + why + " Call " + analysisToolName + " again with arguments that fit its parameters."
				}
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Content: msg, ToolError: true})
			}
		} else {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: why + " Call " + analysisToolName + " with the analysis."})
		}
	}
	return out, errAnalysisMisfit{misfit}
}

// fitAnalysis reads the analysis from a reply: the arguments of its call of the tool,
// checked against cfg (every property of the schema present, nothing else, each of its
// type, enum values among the choices, required fields not null). It returns the analysis
// without its null members, the call it came from, and why it does not fit ("" when it
// does).
func fitAnalysis(reply *llm.Reply, cfg *data.AnalysisConfig) (map[string]any, *llm.ToolCall, string) {
	var call *llm.ToolCall
	for i := range reply.ToolCalls {
		if reply.ToolCalls[i].Name == analysisToolName {
			call = &reply.ToolCalls[i]
			break
		}
	}
	if call == nil {
		return nil, nil, "The answer did not call " + analysisToolName + "."
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil || args == nil {
		return nil, call, "The arguments are not a JSON object."
	}
	schema := analysisSchema(cfg)
	props := schema["properties"].(map[string]any)
	var faults []string
	for k := range args {
		if props[k] == nil {
			faults = append(faults, k+" is not a parameter.")
		}
	}
	for _, k := range schema["required"].([]string) {
		if _, ok := args[k]; !ok {
			faults = append(faults, k+" is missing.")
		}
	}
	for _, k := range []string{data.AnalysisKeySuccessful, data.AnalysisKeySummary} {
		if x, ok := args[k]; ok && x == nil && props[k] != nil {
			faults = append(faults, k+" may not be null.")
		}
	}
	var errs validate.Errors
	validate.CallAnalysis(&errs, args, cfg)
	var e *data.Error
	if errors.As(errs.Err(), &e) {
		for _, p := range e.SortedFieldPaths() {
			faults = append(faults, strings.Join(e.Fields[p], " "))
		}
	}
	if len(faults) > 0 {
		slices.Sort(faults)
		return nil, call, strings.Join(faults, " ")
	}
	for k, v := range args {
		if v == nil {
			delete(args, k)
		}
	}
	return args, call, ""
}
