package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/netguard"
	"github.com/voiceapi/voiceapi/strictjson"
	"github.com/voiceapi/voiceapi/validate"
)

// TestOpenAPIBoundsAreEnforced probes validate with the document's own bounds: for every
// minimum, maximum, maxLength and enum of an agent body's groups, a value on the bound is
// accepted and one past it is refused at that field's path. A bound changed in validate
// but not in the rules table (or the other way round) fails here.
func TestOpenAPIBoundsAreEnforced(t *testing.T) {
	_, doc := openapiDocument(t)
	schemas := dig(t, doc, "components", "schemas").(map[string]any)
	pr := &boundsProber{}
	probeConfigGroups(t, pr, schemas)
	probeToolAndAnalysisFields(t, pr, schemas)
	// The agent's name.
	probeField("name", dig(t, schemas, "AgentCreate", "properties", "name").(map[string]any), func(v any, valid bool) {
		pr.check(t, "name", map[string]any{"name": v}, valid, v)
	})
	if pr.probes < 100 {
		t.Fatalf("only %d probes: the schemas lost their bounds?", pr.probes)
	}
}

// boundsProber sends probes through the decoder and validate, counting them.
type boundsProber struct{ probes int }

// check decodes body as an agent update and checks path is faulted exactly when the
// probed value v is not valid (want).
func (pr *boundsProber) check(t *testing.T, path string, body map[string]any, want bool, v any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	var in data.AgentUpdate
	decodeErr := strictjson.Decode(raw, &in)
	merged := in.Apply(data.DefaultAgent())
	fields := map[string][]string{}
	var e *data.Error
	if errors.As(validate.Combine(decodeErr, validate.AgentChange(merged, &in, true, nil).Err()), &e) {
		fields = e.Fields
	}
	_, faulted := fields[path]
	if faulted == want {
		t.Errorf("%s = %.40v: accepted %v, want %v (%v)", path, v, !faulted, want, fields[path])
	}
	pr.probes++
}

// probeConfigGroups probes every field of the agent's configuration groups.
func probeConfigGroups(t *testing.T, pr *boundsProber, schemas map[string]any) {
	t.Helper()
	// The provider each field needs, so that a valid value is not refused as belonging
	// to another provider.
	context := map[string]map[string]any{
		"llm_config.deployment":  {"provider": "azure"},
		"llm_config.endpoint":    {"provider": "azure"},
		"llm_config.api_version": {"provider": "azure"},
		"llm_config.base_url":    {"provider": "internal"},
		"llm_config.region":      {"provider": "bedrock_claude"},
		"tts_config.speed":       {"provider": "cartesia"},
		"tts_config.emotion":     {"provider": "cartesia"},
		"tts_config.speaker":     {"provider": "rime"},
		"tts_config.speed_alpha": {"provider": "rime"},
		"tts_config.voice_id":    {"provider": "elevenlabs"},
	}
	groups := map[string]string{
		"call_config": "CallConfigInput", "knowledge_base_config": "KnowledgeBaseConfigInput",
		"llm_config": "LLMConfigInput", "prompt_config": "PromptConfigInput",
		"stt_config": "STTConfigInput", "tts_config": "TTSConfigInput",
		"analysis_config": "AnalysisConfigInput",
	}
	for group, schema := range groups {
		props := dig(t, schemas, schema, "properties").(map[string]any)
		for field, p := range props {
			path := group + "." + field
			probeField(path, p.(map[string]any), func(v any, valid bool) {
				members := map[string]any{field: v}
				for k, c := range context[path] {
					members[k] = c
				}
				pr.check(t, path, map[string]any{"name": "probe", group: members}, valid, v)
			})
		}
	}
}

// probeToolAndAnalysisFields probes the fields of a tool (on an end_call tool) and of an
// analysis field (on a date field).
func probeToolAndAnalysisFields(t *testing.T, pr *boundsProber, schemas map[string]any) {
	t.Helper()
	// Tool fields, on an end_call tool.
	for field, p := range dig(t, schemas, "ToolInput", "properties").(map[string]any) {
		path := "llm_config.tools.0." + field
		probeField(path, p.(map[string]any), func(v any, valid bool) {
			tool := map[string]any{"name": "probe", "type": "end_call", field: v}
			pr.check(t, path, map[string]any{"name": "probe", "llm_config": map[string]any{"tools": []any{tool}}}, valid, v)
		})
	}
	// Analysis fields, on a date field.
	for field, p := range dig(t, schemas, "AnalysisFieldInput", "properties").(map[string]any) {
		path := "analysis_config.fields.0." + field
		probeField(path, p.(map[string]any), func(v any, valid bool) {
			f := map[string]any{"name": "probe", "type": "date", "description": "d", field: v}
			if field == "type" && v == "enum" {
				f["choices"] = []any{"a"}
			}
			pr.check(t, path, map[string]any{"name": "probe", "analysis_config": map[string]any{"fields": []any{f}}}, valid, v)
		})
	}
}

// probeField calls try with values on and past each bound of the schema p.
func probeField(path string, p map[string]any, try func(v any, valid bool)) {
	types := fmt.Sprint(p["type"])
	integer := strings.Contains(types, "integer")
	step := 0.01
	if integer {
		step = 1
	}
	if lo, ok := p["minimum"].(float64); ok {
		try(lo, true)
		try(lo-step, false)
	}
	if hi, ok := p["maximum"].(float64); ok {
		try(hi, true)
		if !(integer && hi+step > math.MaxInt32) {
			try(hi+step, false)
		}
	}
	if n, ok := p["maxLength"].(float64); ok {
		valid := true
		if _, patterned := p["pattern"]; patterned || p["format"] == "email" {
			valid = false // "aaa…" need not match the pattern: probe only the refusal
		}
		s := strings.Repeat("a", int(n))
		if p["format"] == "uri" {
			s = "https://example.com/" + strings.Repeat("a", int(n)-len("https://example.com/"))
		}
		if valid {
			try(s, true)
		}
		try(s+"a", false)
		// maxLength counts characters: at the bound in two-byte ones a value is accepted,
		// so a rule counting bytes fails here.
		if valid && p["format"] == nil {
			wide := strings.Repeat("é", int(n))
			try(wide, true)
			try(wide+"é", false)
		}
	}
	if enum, ok := p["enum"].([]any); ok {
		for _, v := range enum {
			try(v, true)
		}
		try("not-one-of-them", false)
	}
	if n, ok := p["maxProperties"].(float64); ok {
		members := func(n int) map[string]any {
			m := map[string]any{}
			for i := range n {
				m[fmt.Sprint("v", i)] = "x"
			}
			return m
		}
		try(members(int(n)), true)
		try(members(int(n)+1), false)
	}
}

// TestOpenAPIBodyBoundsAreEnforced probes the other request bodies the same way: each
// top-level member's bounds and enums, on a body whose required members are valid.
func TestOpenAPIBodyBoundsAreEnforced(t *testing.T) {
	_, doc := openapiDocument(t)
	schemas := dig(t, doc, "components", "schemas").(map[string]any)
	type check func(body []byte) error
	bodies := []struct {
		schema string
		base   map[string]any
		run    check
		// context adds members a field needs beside it to be valid.
		context map[string]map[string]any
	}{
		{"WorkspaceCreate", map[string]any{"name": "w"}, decodeThen(validate.WorkspaceCreate), nil},
		{"UserCreate", map[string]any{"name": "n", "email": "a@example.com", "password": "longenough"}, decodeThen(validate.UserCreate), nil},
		{"NumberCreate", map[string]any{"phone_number": "+14155550123", "provider": "twilio"}, decodeThen(validate.NumberCreate), nil},
		{"CallCreate", map[string]any{"agent_id": "agt_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6", "direction": "web"}, decodeThen(validate.CallCreate),
			map[string]map[string]any{"duration_ms": {"status": "ended"}}},
		{"WebhookCreate", map[string]any{"url": "https://example.com/hook", "events": []string{"*"}}, decodeThen(func(in data.WebhookCreate) error { return validate.WebhookCreate(in, netguard.CheckURL) }), nil},
		{"KnowledgeQuery", map[string]any{"query": "q"}, decodeThen(validate.KnowledgeQuery), nil},
		{"PublishRequest", map[string]any{}, func(body []byte) error {
			var in struct {
				Description *string `json:"description"`
			}
			var errs validate.Errors
			if err := strictjson.Decode(body, &in); err != nil {
				return err
			}
			validate.ValidatePublish(in.Description, &errs)
			return errs.Err()
		}, nil},
	}
	probes := 0
	for _, b := range bodies {
		for field, p := range dig(t, schemas, b.schema, "properties").(map[string]any) {
			probeField(field, p.(map[string]any), func(v any, valid bool) {
				body := map[string]any{}
				for k, x := range b.base {
					body[k] = x
				}
				for k, x := range b.context[field] {
					body[k] = x
				}
				body[field] = v
				raw, _ := json.Marshal(body)
				fields := map[string][]string{}
				var e *data.Error
				if errors.As(b.run(raw), &e) {
					fields = e.Fields
				}
				if _, faulted := fields[field]; faulted == valid {
					t.Errorf("%s.%s = %.40v: accepted %v, want %v (%v)", b.schema, field, v, !faulted, valid, fields[field])
				}
				probes++
			})
		}
	}
	if probes < 30 {
		t.Fatalf("only %d probes", probes)
	}
}

// decodeThen decodes a body strictly into T and runs its rules, as the handlers do.
func decodeThen[T any](rules func(T) error) func([]byte) error {
	return func(body []byte) error {
		var in T
		return validate.Combine(strictjson.Decode(body, &in), rules(in))
	}
}
