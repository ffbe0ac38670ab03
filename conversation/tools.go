package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// Custom function limits (conventions §21).
const (
	// DefaultFunctionTimeout applies when a custom_function has no timeout (or 0).
	DefaultFunctionTimeout = 10 * time.Second
	// MaxFunctionTimeout caps a custom_function's timeout: one step of an answer, which a
	// conversation's lease must outlast (service.ConversationService's lease span).
	MaxFunctionTimeout = 30 * time.Second
	// MaxFunctionAnswer is how much of a custom function's answer the model reads.
	MaxFunctionAnswer = 16 << 10
)

// toolResult is what running one tool call gave.
type toolResult struct {
	args     any // the decoded arguments, or the raw text when they were not JSON
	result   any
	failed   bool
	end      string
	transfer *data.PhoneDirectoryEntry
	set      map[string]any
}

func (r toolResult) item(tc llm.ToolCall) *data.ToolCallItem {
	return &data.ToolCallItem{ID: tc.ID, Name: tc.Name, Arguments: exactArguments(tc.Arguments, r.args), Result: r.result, Error: r.failed}
}

// exactArguments is what the item records of a call's arguments: the JSON the model wrote
// with its numbers as written (json.Number), so a test's tool_called criterion compares
// them exactly (agenttest); decoded is the tool's own reading, kept for any other text.
func exactArguments(text string, decoded any) any {
	var v any
	if strings.TrimSpace(text) == "" || data.DecodeJSON([]byte(text), &v) != nil {
		return decoded
	}
	return v
}

func failure(args any, format string, a ...any) toolResult {
	return toolResult{args: args, result: map[string]any{"error": fmt.Sprintf(format, a...)}, failed: true}
}

// toolContent is a tool item's content: the call and its result in one line, as a
// transcript shows it.
func toolContent(name string, r toolResult) string {
	return name + "(" + argumentsText(r.args) + ") → " + resultText(r.result)
}

// runTool gives a tool call its meaning in text (conventions §21). An unknown tool or
// arguments that fail the tool's schema come back as an error result: the model reads
// it and the conversation goes on. keys names the answer's custom function calls.
func (e *Engine) runTool(ctx context.Context, cfg *data.AgentConfig, tc llm.ToolCall, keys *functionKeys) toolResult {
	raw := any(tc.Arguments)
	var decoded any
	if data.DecodeJSON([]byte(tc.Arguments), &decoded) == nil {
		raw = decoded
	}
	var tool *data.Tool
	for _, t := range cfg.LLMConfig.Tools {
		if t != nil && t.Name == tc.Name {
			tool = t
			break
		}
	}
	if tool == nil {
		return failure(raw, "There is no tool named %q.", tc.Name)
	}
	args, err := CheckArguments(ToolSchema(tool), tc.Arguments)
	if err != nil {
		return failure(raw, "%s", err)
	}
	r := toolResult{args: args}
	switch tool.Type {
	case data.ToolEndCall:
		r.result, r.end = map[string]any{"ended": true}, data.EndAgentEnded
	case data.ToolTransferCall:
		dest, _ := args["destination"].(string)
		for _, entry := range tool.PhoneDirectory {
			if entry.Name == dest {
				r.transfer, r.end = &entry, data.EndTransferred
				r.result = map[string]any{"transferred_to": map[string]any{"name": entry.Name, "phone_number": entry.PhoneNumber, "transfer_type": entry.TransferType}}
			}
		}
	case data.ToolPressIVR:
		r.result = map[string]any{"recorded": true, "digits": args["digits"], "note": "a text conversation presses no keys"}
	case data.ToolSendSMS:
		msg := tool.Content
		if tool.ContentType == "prompt" {
			msg, _ = args["message"].(string)
		}
		r.result = map[string]any{"recorded": true, "message": msg, "note": "a text conversation sends no message"}
	case data.ToolExtractDynamicVariable:
		r.set = args
		r.result = map[string]any{"set": args}
	case data.ToolCustomFunction:
		return e.callFunction(ctx, tool, args, keys)
	default:
		return failure(args, "The tool %q has a type this server cannot run (%s).", tool.Name, tool.Type)
	}
	return r
}

// callFunction performs a custom function's HTTP request: its method, endpoint, headers
// and query (substituted), the arguments as a JSON body (as query parameters for GET and
// DELETE) and the call's idempotency key (keys), within the tool's timeout. The model gets
// the status and the answer's first MaxFunctionAnswer bytes; an answer that is a JSON
// object sets the variables named in custom_function_variables.
func (e *Engine) callFunction(ctx context.Context, t *data.Tool, args map[string]any, keys *functionKeys) toolResult {
	if e.Mocks != nil {
		mock, ok := e.Mocks[t.Name]
		if !ok {
			return failure(args, "The function %q has no mock in this test: it is not called.", t.Name)
		}
		return functionResult(t, args, mock.Status, []byte(mock.Body), echoedSecrets(t))
	}
	if e.Functions == nil {
		return failure(args, "Custom functions cannot be called here.")
	}
	timeout := DefaultFunctionTimeout
	if t.Timeout != nil && *t.Timeout > 0 {
		timeout = min(time.Duration(*t.Timeout)*time.Millisecond, MaxFunctionTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := functionRequest(ctx, t, args, keys.next(t.Name))
	if err != nil {
		return failure(args, "The function %q cannot be called: %v.", t.Name, err)
	}
	resp, err := e.Functions.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return failure(args, "The function %q did not answer within %s.", t.Name, timeout)
		}
		return failure(args, "The function %q could not be reached: %v.", t.Name, unwrapURLError(err))
	}
	defer resp.Body.Close()
	// Past the bound by the longest secret, so one that straddles the cut is whole to mask.
	secrets := echoedSecrets(t)
	limit := int64(MaxFunctionAnswer + 1)
	if len(secrets) > 0 {
		limit += int64(len(secrets[0]))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return failure(args, "The function %q's answer was cut off: %v.", t.Name, unwrapURLError(err))
	}
	return functionResult(t, args, resp.StatusCode, body, secrets)
}

// FunctionAnswer is a custom function's answer given without a request (a test's mock).
type FunctionAnswer struct {
	Status int
	Body   string
}

// functionResult is what the model reads of a custom function's answer: its status and
// first MaxFunctionAnswer bytes, secrets (echoedSecrets) masked; a 2xx JSON object sets
// the variables the tool names.
func functionResult(t *data.Tool, args map[string]any, status int, body []byte, secrets []string) toolResult {
	truncated := len(body) > MaxFunctionAnswer
	if body = maskSecrets(body, secrets); len(body) > MaxFunctionAnswer {
		body = body[:MaxFunctionAnswer]
	}
	r := toolResult{args: args, result: map[string]any{"status": status, "body": string(body), "truncated": truncated}}
	if status/100 == 2 && len(t.CustomFunctionVariables) > 0 {
		var obj map[string]any
		if data.DecodeJSON(body, &obj) == nil {
			for _, name := range t.CustomFunctionVariables {
				if v, ok := obj[name]; ok && ValueAllowed(v) {
					if r.set == nil {
						r.set = map[string]any{}
					}
					r.set[name] = v
				}
			}
		}
	}
	return r
}

// unwrapURLError drops net/http's "Post \"url\": " prefix: the model needs the cause.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// functionRequest builds a custom function's request. Header items are "Name: value",
// query items "key=value". key, when not "", is sent as FunctionKeyHeader, on every
// method (a GET with side effects exists; a receiver ignores a header it does not use);
// an Idempotency-Key among the tool's own headers replaces it: the team chose it.
func functionRequest(ctx context.Context, t *data.Tool, args map[string]any, key string) (*http.Request, error) {
	u, err := url.Parse(t.APIEndpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("its api_endpoint %q is not an http(s) URL", t.APIEndpoint)
	}
	q := u.Query()
	for i, item := range t.CustomFunctionQuery {
		k, v, ok := strings.Cut(item, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("custom_function_query item %d is not key=value", i)
		}
		q.Add(k, v)
	}
	method := t.HTTPMethod
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader
	if method == http.MethodGet || method == http.MethodDelete {
		for k, v := range args {
			s, ok := FormatValue(v)
			if !ok {
				s = argumentsText(v)
			}
			q.Set(k, s)
		}
	} else {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set(FunctionKeyHeader, key)
	}
	for i, item := range t.CustomFunctionHeaders {
		k, v, ok := strings.Cut(item, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("custom_function_headers item %d is not \"Name: value\"", i)
		}
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return req, nil
}
