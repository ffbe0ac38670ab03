package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

// bookingShape is a strict structured output's schema: every property required, no other.
var bookingShape = &llm.ResponseSchema{Name: "booking", Schema: map[string]any{
	"type": "object",
	"properties": map[string]any{
		"people": map[string]any{"type": "integer"},
		"time":   map[string]any{"type": []any{"string", "null"}},
	},
	"required":             []any{"people", "time"},
	"additionalProperties": false,
}}

// TestResponseSchemaSentAsJSONSchemaFormat: on every OpenAI-compatible provider a
// ResponseSchema goes out as response_format {"type":"json_schema","json_schema":{name,
// schema, strict: true}}, exactly, and the reply's JSON text comes back as its Text.
func TestResponseSchemaSentAsJSONSchemaFormat(t *testing.T) {
	eachProvider(t, openAIProviders, func(t *testing.T, p string) {
		if !llm.SupportsResponseSchema(p) {
			t.Fatalf("%s speaks chat completions but is said to have no structured output", p)
		}
		s, c := standIn(t, p)
		s.Queue(llmtest.JSON(map[string]any{"people": 2, "time": nil}))
		reply, err := c.Complete(context.Background(), llm.Request{
			Messages:       []llm.Message{{Role: llm.RoleUser, Content: "A table for two."}},
			ResponseSchema: bookingShape,
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if reply.Text != `{"people":2,"time":null}` || len(reply.ToolCalls) != 0 || reply.StopReason != "stop" {
			t.Errorf("reply %+v", reply)
		}
		req := s.Last()
		if req.ResponseSchema == nil || req.ResponseSchema.Name != "booking" || !reflect.DeepEqual(req.ResponseSchema.Schema, bookingShape.Schema) {
			t.Errorf("the stand-in read %+v", req.ResponseSchema)
		}
		var body struct {
			ResponseFormat json.RawMessage `json:"response_format"`
		}
		json.Unmarshal(req.Body, &body)
		schema, _ := json.Marshal(bookingShape.Schema)
		want := `{"json_schema":{"name":"booking","strict":true,"schema":` + string(schema) + `},"type":"json_schema"}`
		if !sameJSON(string(body.ResponseFormat), want) {
			t.Errorf("response_format %s, want %s", body.ResponseFormat, want)
		}
	})
}

// TestNoResponseFormatWithoutSchema: a request without a ResponseSchema leaves
// response_format out, so a free-text reply stays free.
func TestNoResponseFormatWithoutSchema(t *testing.T) {
	s, c := standIn(t, data.LLMGroq)
	s.Queue(llmtest.Text("ok"))
	if _, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(s.Last().Body), "response_format") || s.Last().ResponseSchema != nil {
		t.Errorf("body %s", s.Last().Body)
	}
}

// TestResponseSchemaWithoutNameRefused: a schema without its name or body is a
// configuration error before any request (the provider would refuse it).
func TestResponseSchemaWithoutNameRefused(t *testing.T) {
	s, c := standIn(t, data.LLMInternal)
	for _, rs := range []*llm.ResponseSchema{{Schema: bookingShape.Schema}, {Name: "booking"}} {
		_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, ResponseSchema: rs}, nil)
		var e *llm.Error
		if !errors.As(err, &e) || e.Status != 0 || e.Retryable || !strings.Contains(e.Message, "response schema") {
			t.Errorf("%+v: %v", rs, err)
		}
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests reached the provider", n)
	}
}

// TestBedrockRefusesResponseSchema: Converse has no structured output; a ResponseSchema
// is a configuration error naming the way out, and nothing is sent.
func TestBedrockRefusesResponseSchema(t *testing.T) {
	if llm.SupportsResponseSchema(data.LLMBedrockClaude) {
		t.Fatal("bedrock_claude is said to have structured output")
	}
	s, c := standIn(t, data.LLMBedrockClaude)
	_, err := c.Complete(context.Background(), llm.Request{
		Messages:       []llm.Message{{Role: llm.RoleUser, Content: "A table for two."}},
		ResponseSchema: bookingShape,
	}, nil)
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 0 || e.Retryable || !strings.Contains(e.Message, "tool call") {
		t.Errorf("error %v", err)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests reached the provider", n)
	}
}

// TestAzureStructuredOutputByAPIVersion: structured output came to Azure OpenAI with
// api-version 2024-08-01-preview. A client on an older version says it has none, and a
// ResponseSchema is a configuration error naming the way out, with nothing sent; from
// that version on it goes out as response_format.
func TestAzureStructuredOutputByAPIVersion(t *testing.T) {
	for _, c := range []struct {
		version    string
		structured bool
	}{
		{"2024-02-15-preview", false},
		{"2024-06-01", false},
		{"2024-07-01-preview", false},
		{"2024-08-01-preview", true},
		{"2024-10-21", true},
	} {
		t.Run(c.version, func(t *testing.T) {
			s, client := standIn(t, data.LLMAzure, llmtest.WithAPIVersion(c.version))
			if got := llm.StructuredOutput(client); got != c.structured {
				t.Fatalf("StructuredOutput = %v, want %v", got, c.structured)
			}
			s.Queue(llmtest.JSON(map[string]any{"people": 2, "time": nil}))
			_, err := client.Complete(context.Background(), llm.Request{
				Messages:       []llm.Message{{Role: llm.RoleUser, Content: "A table for two."}},
				ResponseSchema: bookingShape,
			}, nil)
			if c.structured {
				if err != nil || s.Last().ResponseSchema == nil {
					t.Errorf("error %v, the stand-in read %+v", err, s.Last())
				}
				return
			}
			var e *llm.Error
			if !errors.As(err, &e) || e.Status != 0 || e.Retryable || !strings.Contains(e.Message, "2024-08-01-preview") || !strings.Contains(e.Message, "tool call") {
				t.Errorf("error %v", err)
			}
			if n := len(s.Requests()); n != 0 {
				t.Errorf("%d requests reached the provider", n)
			}
		})
	}
}
