package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// ivrKeys is what press_ivr may press: digits, star and hash, up to 20 at once.
const ivrKeys = `^[0-9*#]{1,20}$`

// Tools returns the functions offered to the model for cfg's tools (null items skipped),
// in the configuration's order.
func Tools(cfg *data.AgentConfig) []llm.Tool {
	var out []llm.Tool
	for _, t := range cfg.LLMConfig.Tools {
		if t != nil {
			out = append(out, llm.Tool{Name: t.Name, Description: ToolDescription(t), Parameters: ToolSchema(t)})
		}
	}
	return out
}

// ToolDescription is what the model reads about a tool: its description, else what its
// type does; a transfer also lists its destinations.
func ToolDescription(t *data.Tool) string {
	d := ""
	if t.Description != nil {
		d = *t.Description
	}
	if d == "" {
		d = defaultDescriptions[t.Type]
	}
	switch t.Type {
	case data.ToolTransferCall:
		var b strings.Builder
		b.WriteString(d)
		b.WriteString(" Destinations:")
		for _, e := range t.PhoneDirectory {
			fmt.Fprintf(&b, "\n- %s: %s", e.Name, e.Description)
		}
		return b.String()
	case data.ToolSendSMS:
		if t.ContentType == "prompt" {
			return d + " Write the message as follows: " + t.Content
		}
	}
	return d
}

var defaultDescriptions = map[string]string{
	data.ToolEndCall:                "End the call once the conversation is over, after saying goodbye.",
	data.ToolTransferCall:           "Transfer the call to another person or team.",
	data.ToolPressIVR:               "Press keys on the phone keypad to navigate an automated phone menu.",
	data.ToolSendSMS:                "Send a text message to the caller.",
	data.ToolExtractDynamicVariable: "Record information the caller gave.",
	data.ToolCustomFunction:         "Call an external function.",
}

// ToolSchema returns the JSON schema of a tool's arguments, following its fields:
// transfer_call's phone_directory names as an enum, extract_dynamic_variable's variables
// with their types and enum choices, a custom_function's own parameters schema (an empty
// object when it has none or it is not a JSON object), a digit string for press_ivr, a
// message for a send_sms whose content is a prompt, nothing for end_call.
func ToolSchema(t *data.Tool) map[string]any {
	props := map[string]any{}
	var required []string
	switch t.Type {
	case data.ToolTransferCall:
		names := make([]any, len(t.PhoneDirectory))
		for i, e := range t.PhoneDirectory {
			names[i] = e.Name
		}
		props["destination"] = map[string]any{"type": "string", "enum": names, "description": "The name of the destination to transfer to."}
		required = []string{"destination"}
	case data.ToolPressIVR:
		props["digits"] = map[string]any{"type": "string", "pattern": ivrKeys, "description": "The keys to press: digits, * and #."}
		required = []string{"digits"}
	case data.ToolSendSMS:
		if t.ContentType == "prompt" {
			props["message"] = map[string]any{"type": "string", "minLength": 1, "description": "The text message to send."}
			required = []string{"message"}
		}
	case data.ToolExtractDynamicVariable:
		for _, v := range t.Variables {
			props[v.Name] = variableSchema(v)
		}
	case data.ToolCustomFunction:
		if s := customSchema(t); s != nil {
			return s
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func variableSchema(v data.ToolVariable) map[string]any {
	s := map[string]any{"description": v.Description}
	switch v.Type {
	case "number":
		s["type"] = "number"
	case "boolean":
		s["type"] = "boolean"
	case "enum":
		s["type"] = "string"
		choices := make([]any, len(v.Choices))
		for i, c := range v.Choices {
			choices[i] = c
		}
		s["enum"] = choices
	default:
		s["type"] = "string"
	}
	return s
}

// customSchema decodes a custom_function's parameters; nil when it has none or they are
// not a JSON object.
func customSchema(t *data.Tool) map[string]any {
	if t.CustomFunctionParameters == nil || strings.TrimSpace(*t.CustomFunctionParameters) == "" {
		return nil
	}
	var s map[string]any // its bounds and examples as written (data.DecodeJSON)
	if err := data.DecodeJSON([]byte(*t.CustomFunctionParameters), &s); err != nil {
		return nil
	}
	if _, ok := s["type"]; !ok {
		s["type"] = "object" // providers want the parameters to be an object
	}
	return s
}

// noLoader refuses every schema reference outside the document: a user's schema must not
// make the server read files or fetch URLs.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references outside the document are not followed (%s)", url)
}

// CheckArguments decodes a tool call's arguments (an empty text is {}) and checks them
// against schema. The error is written for the model to read and correct.
func CheckArguments(schema map[string]any, arguments string) (map[string]any, error) {
	if strings.TrimSpace(arguments) == "" {
		arguments = "{}"
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(arguments))
	if err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, errors.New("the arguments must be a JSON object")
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	// The schema goes through JSON so the compiler sees plain JSON values only.
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("the tool's schema cannot be used: %v", err)
	}
	sdoc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err == nil {
		err = c.AddResource("tool.json", sdoc)
	}
	var compiled *jsonschema.Schema
	if err == nil {
		compiled, err = c.Compile("tool.json")
	}
	if err != nil {
		return nil, fmt.Errorf("the tool's schema cannot be used: %v", err)
	}
	if err := compiled.Validate(doc); err != nil {
		return nil, fmt.Errorf("the arguments do not match the tool's schema: %s", validationMessage(err))
	}
	// Numbers keep their text (json.Number), as the validator read them: an extracted
	// variable or a custom function's parameter 12345678901234567890 stays that.
	var args map[string]any
	if err := data.DecodeJSON([]byte(arguments), &args); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	return args, nil
}

// english prints validation errors.
var english = message.NewPrinter(language.English)

// validationMessage flattens a validation error to its causes, one per line.
func validationMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			at := "/" + strings.Join(e.InstanceLocation, "/")
			lines = append(lines, fmt.Sprintf("at %s: %s", at, e.ErrorKind.LocalizedString(english)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(lines, "; ")
}
