package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/validate"
)

// Extraction: the agent's model fills a call's analysis in one of two forms, never free
// text read by hand (docs/analysis.md, "Extraction"): structured output whose schema is
// the analysis_config's fields, where the provider has it (the OpenAI-compatible ones),
// else one forced tool call whose parameters are that schema (Bedrock). An answer that
// does not fit is sent back once with what was wrong; a second misfit is the call's
// analysis error.

// analysisToolName is the function the model must call with the analysis, and the name
// of the structured output's schema.
const analysisToolName = "record_analysis"

// analysisPrompt is the system prompt of an extraction by a forced tool call.
const analysisPrompt = "You analyze a finished phone call between a voice AI agent and a caller. " +
	"Read the transcript and call the record_analysis function exactly once, with a value for each of its parameters " +
	"that the transcript supports. Give null to a parameter the transcript does not tell, unless the parameter is required."

// analysisStructuredPrompt is the system prompt of an extraction by structured output.
const analysisStructuredPrompt = "You analyze a finished phone call between a voice AI agent and a caller. " +
	"Read the transcript and answer with one JSON object of the record_analysis schema, with a value for each of its properties " +
	"that the transcript supports. Give null to a property the transcript does not tell, unless the property is required."

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

// extract asks model for the analysis of c under cfg: by structured output where the
// model's provider has it, else by a forced call of the analysis tool; once more with
// the faults when the answer does not fit. The error is the provider's (*llm.Error) or
// errAnalysisMisfit.
func extract(ctx context.Context, model llm.Client, lc data.LLMConfig, cfg *data.AnalysisConfig, c *data.Call) (extraction, error) {
	structured := llm.StructuredOutput(model)
	zero := 0.0
	req := llm.Request{
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: transcriptText(c)}},
		Temperature: &zero, // the same transcript, the same analysis
	}
	if structured {
		req.System = analysisStructuredPrompt
		req.ResponseSchema = &llm.ResponseSchema{Name: analysisToolName, Schema: analysisSchema(cfg)}
	} else {
		req.System = analysisPrompt
		req.Tools = []llm.Tool{{Name: analysisToolName, Description: "Records the analysis of the call.", Parameters: analysisSchema(cfg)}}
		req.ToolChoice = llm.ToolChoice{Mode: "tool", Name: analysisToolName}
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
		var analysis map[string]any
		var call *llm.ToolCall
		var why string
		if structured {
			analysis, why = fitStructured(reply, cfg)
		} else {
			analysis, call, why = fitToolCall(reply, cfg)
		}
		if why == "" {
			out.analysis = analysis
			return out, nil
		}
		misfit = why
		req.Messages = append(req.Messages, retryMessages(reply, call, why, structured)...)
	}
	return out, errAnalysisMisfit{misfit}
}

// retryMessages send a misfit answer back with what was wrong: as the tool's error when
// the model called it, else as a request to answer in the form asked.
func retryMessages(reply *llm.Reply, call *llm.ToolCall, why string, structured bool) []llm.Message {
	msgs := []llm.Message{{Role: llm.RoleAssistant, Content: reply.Text, ToolCalls: reply.ToolCalls}}
	switch {
	case structured:
		return append(msgs, llm.Message{Role: llm.RoleUser, Content: "Not recorded: " + why + " Answer again with one JSON object that fits the " + analysisToolName + " schema."})
	case call != nil:
		for _, tc := range reply.ToolCalls {
			msg := "Not recorded: another call answers."
			if tc.ID == call.ID {
				msg = "Not recorded: " + why + " Call " + analysisToolName + " again with arguments that fit its parameters."
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Content: msg, ToolError: true})
		}
		return msgs
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: why + " Call " + analysisToolName + " with the analysis."})
}

// fitToolCall reads the analysis from the arguments of the reply's call of the tool and
// checks it (fitAnalysis). It returns the call it came from too.
func fitToolCall(reply *llm.Reply, cfg *data.AnalysisConfig) (map[string]any, *llm.ToolCall, string) {
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
	if err := data.DecodeJSON([]byte(call.Arguments), &args); err != nil || args == nil {
		return nil, call, "The arguments are not a JSON object."
	}
	analysis, why := fitAnalysis(args, cfg)
	return analysis, call, why
}

// fitStructured reads the analysis from a structured output's text, the JSON object the
// schema asked for, and checks it (fitAnalysis): the provider's strict mode is trusted
// no more than a tool call's arguments.
func fitStructured(reply *llm.Reply, cfg *data.AnalysisConfig) (map[string]any, string) {
	var args map[string]any
	if err := data.DecodeJSON([]byte(reply.Text), &args); err != nil || args == nil {
		return nil, "The answer is not a JSON object."
	}
	return fitAnalysis(args, cfg)
}

// fitAnalysis checks an answer against cfg (every property of the schema present,
// nothing else, each of its type, enum values among the choices, required fields not
// null). It returns the analysis without its null members and why it does not fit (""
// when it does).
func fitAnalysis(args map[string]any, cfg *data.AnalysisConfig) (map[string]any, string) {
	schema := analysisSchema(cfg)
	props := schema["properties"].(map[string]any)
	var faults []string
	for k := range args {
		if props[k] == nil {
			faults = append(faults, k+" is not in the schema.")
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
		return nil, strings.Join(faults, " ")
	}
	for k, v := range args {
		if v == nil {
			delete(args, k)
		}
	}
	return args, ""
}
