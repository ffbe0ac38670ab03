package conversation

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

func TestSubstitute(t *testing.T) {
	vars := map[string]any{
		"name": "Ada", "count": float64(3), "ratio": 2.5, "big": float64(1_000_000), "vip": true,
		"num": json.Number("12.50"), "empty": "", "list": []any{"x"}, "obj": map[string]any{}, "nothing": nil,
		"with-dash": "d", "_under": "u",
	}
	cases := []struct {
		text, want string
		missing    []string
	}{
		{"Hello {{name}}!", "Hello Ada!", nil},
		{"{{name}}{{name}}", "AdaAda", nil},
		{"{{count}} items at {{ratio}}, {{big}} total, vip={{vip}}", "3 items at 2.5, 1000000 total, vip=true", nil},
		{"json number {{num}}", "json number 12.50", nil},
		{"[{{empty}}]", "[]", nil},
		{"{{with-dash}}{{_under}}", "du", nil},
		{"no variables", "no variables", nil},
		// Not references: spaces, a name starting with a digit, unclosed, single braces.
		{"{{ name }} {{2x}} {{name {name}", "{{ name }} {{2x}} {{name {name}", nil},
		// A third brace before a reference: the reference is the last two braces.
		{"{{{name}}}", "{Ada}", nil},
		// Missing: unknown names, and values of another type than string, number, boolean.
		{"{{who}} {{list}} {{obj}} {{nothing}} {{who}}", "{{who}} {{list}} {{obj}} {{nothing}} {{who}}", []string{"who", "list", "obj", "nothing"}},
		{"Hi {{name}}, {{who}}", "Hi Ada, {{who}}", []string{"who"}},
	}
	for _, c := range cases {
		got, missing := Substitute(c.text, vars)
		if got != c.want || !reflect.DeepEqual(missing, c.missing) {
			t.Errorf("Substitute(%q) = %q, missing %v; want %q, missing %v", c.text, got, missing, c.want, c.missing)
		}
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "_": true, "-": true, "order_id": true, "A-9": true, "x1": true,
		"": false, "1a": false, "a b": false, "a.b": false, "é": false, "a{": false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestVariablesIn(t *testing.T) {
	got := VariablesIn("{{b}} {{a}} {{b}} {{ c }} {{d}}")
	if want := []string{"b", "a", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("VariablesIn = %v, want %v", got, want)
	}
}

func TestWithBuiltIns(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skipf("no timezone database: %v", err)
	}
	now := time.Date(2026, 11, 21, 10, 4, 5, 0, time.UTC)
	given := map[string]any{"caller_number": "+15550100", "name": "Ada"}
	got := WithBuiltIns(given, CallFacts{CallID: "conv_1", Now: now, Location: paris})
	want := map[string]any{
		"caller_number": "+15550100", // given: a web conversation has no caller of its own
		"called_number": "", "call_id": "conv_1", "current_time": "2026-11-21T11:04:05+01:00", "name": "Ada",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("WithBuiltIns = %v, want %v", got, want)
	}
	if len(given) != 2 {
		t.Errorf("WithBuiltIns changed its input: %v", given)
	}
	utc := WithBuiltIns(nil, CallFacts{Now: now})
	if utc[VarCurrentTime] != "2026-11-21T10:04:05Z" {
		t.Errorf("current_time without a timezone = %v, want UTC", utc[VarCurrentTime])
	}
}

func TestMerge(t *testing.T) {
	got := Merge(map[string]any{"a": "agent", "b": "agent"}, map[string]any{"b": "number", "c": "number"}, map[string]any{"c": "call"})
	want := map[string]any{"a": "agent", "b": "number", "c": "call"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge = %v, want %v", got, want)
	}
}

func str(s string) *string { return &s }

// everyPlaceConfig uses a distinct variable in every place §23 names.
func everyPlaceConfig() data.AgentConfig {
	cfg := data.DefaultAgentConfig()
	cfg.PromptConfig.Prompt = "You help {{customer}}."
	cfg.PromptConfig.WelcomeMessage = "Hello {{customer}}, this is {{agent_name}}."
	cfg.LLMConfig.Tools = []*data.Tool{
		nil,
		{Name: "transfer", Type: data.ToolTransferCall, Description: str("Transfer to {{team}}"),
			AnnouncementMessage: str("Putting you through to {{team}}"), AnnouncementPrompt: str("Say {{tone}}"),
			TransferDeclinedMessage: str("{{declined}}"), VoicemailResponseText: str("{{voicemail}}"),
			PhoneDirectory: []data.PhoneDirectoryEntry{{Name: "Sales", PhoneNumber: "+15550100", Description: "{{not_a_place}}", TransferType: "cold"}}},
		{Name: "sms", Type: data.ToolSendSMS, ContentType: "static", Content: "Your code is {{code}}"},
		{Name: "lookup", Type: data.ToolCustomFunction, HTTPMethod: "POST", APIEndpoint: "https://api.example.com/{{tenant}}/orders",
			CustomFunctionHeaders: []string{"Authorization: Bearer {{token}}"}, CustomFunctionQuery: []string{"region={{region}}"},
			CustomFunctionParameters:    str(`{"type":"object","properties":{"order_id":{"type":"string","description":"Order of {{customer}} at {{store}}"}}}`),
			SpeakDuringExecutionOptions: []string{"One moment, {{customer}}."}},
	}
	return cfg
}

func TestConfigVariablesEveryPlace(t *testing.T) {
	cfg := everyPlaceConfig()
	got := ConfigVariables(&cfg)
	want := []string{"agent_name", "code", "customer", "declined", "region", "store", "team", "tenant", "token", "tone", "voicemail"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ConfigVariables = %v, want %v (phone directory descriptions are not a place)", got, want)
	}
	if m := MissingVariables(&cfg, map[string]any{"customer": "Ada", "code": float64(42), "team": true, "tenant": []any{}}); !reflect.DeepEqual(m,
		[]string{"agent_name", "declined", "region", "store", "tenant", "token", "tone", "voicemail"}) {
		t.Errorf("MissingVariables = %v", m)
	}
}

func TestSubstituteConfigEveryPlace(t *testing.T) {
	cfg := everyPlaceConfig()
	vars := map[string]any{
		"customer": `Ada "the" Lovelace`, "agent_name": "Max", "team": "Sales", "tone": "warmly", "declined": "Sorry.",
		"voicemail": "Call back.", "code": float64(42), "tenant": "acme", "token": "s3cret", "region": "eu", "store": "Soho",
	}
	got, missing := SubstituteConfig(cfg, vars)
	if len(missing) != 0 {
		t.Fatalf("missing = %v, want none", missing)
	}
	tr, sms, fn := got.LLMConfig.Tools[1], got.LLMConfig.Tools[2], got.LLMConfig.Tools[3]
	checks := map[string][2]string{
		"prompt":                         {got.PromptConfig.Prompt, `You help Ada "the" Lovelace.`},
		"welcome_message":                {got.PromptConfig.WelcomeMessage, `Hello Ada "the" Lovelace, this is Max.`},
		"description":                    {*tr.Description, "Transfer to Sales"},
		"announcement_message":           {*tr.AnnouncementMessage, "Putting you through to Sales"},
		"announcement_prompt":            {*tr.AnnouncementPrompt, "Say warmly"},
		"transfer_declined_message":      {*tr.TransferDeclinedMessage, "Sorry."},
		"voicemail_response_text":        {*tr.VoicemailResponseText, "Call back."},
		"content":                        {sms.Content, "Your code is 42"},
		"api_endpoint":                   {fn.APIEndpoint, "https://api.example.com/acme/orders"},
		"custom_function_headers":        {fn.CustomFunctionHeaders[0], "Authorization: Bearer s3cret"},
		"custom_function_query":          {fn.CustomFunctionQuery[0], "region=eu"},
		"speak_during_execution_options": {fn.SpeakDuringExecutionOptions[0], `One moment, Ada "the" Lovelace.`},
		"phone_directory (untouched)":    {tr.PhoneDirectory[0].Description, "{{not_a_place}}"},
	}
	for place, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", place, c[0], c[1])
		}
	}
	// The parameters stay a JSON document: the quote in the value is escaped.
	var params struct {
		Properties map[string]struct{ Description string } `json:"properties"`
	}
	if err := json.Unmarshal([]byte(*fn.CustomFunctionParameters), &params); err != nil {
		t.Fatalf("custom_function_parameters is no longer JSON: %v: %s", err, *fn.CustomFunctionParameters)
	}
	if d := params.Properties["order_id"].Description; d != `Order of Ada "the" Lovelace at Soho` {
		t.Errorf("parameters description = %q", d)
	}
	// The input configuration is unchanged.
	if cfg.PromptConfig.Prompt != "You help {{customer}}." || *cfg.LLMConfig.Tools[1].Description != "Transfer to {{team}}" ||
		cfg.LLMConfig.Tools[3].CustomFunctionHeaders[0] != "Authorization: Bearer {{token}}" {
		t.Error("SubstituteConfig changed its input")
	}
	_, missing = SubstituteConfig(cfg, map[string]any{"customer": "Ada"})
	if want := []string{"agent_name", "code", "declined", "region", "store", "team", "tenant", "token", "tone", "voicemail"}; !reflect.DeepEqual(missing, want) {
		t.Errorf("missing = %v, want %v", missing, want)
	}
}

func TestSubstituteConfigParametersNotJSON(t *testing.T) {
	cfg := data.DefaultAgentConfig()
	cfg.LLMConfig.Tools = []*data.Tool{{Name: "f", Type: data.ToolCustomFunction, CustomFunctionParameters: str("not json {{x}}")}}
	got, missing := SubstituteConfig(cfg, map[string]any{"x": "y"})
	if *got.LLMConfig.Tools[0].CustomFunctionParameters != "not json y" || len(missing) != 0 {
		t.Errorf("plain-text parameters = %q, missing %v", *got.LLMConfig.Tools[0].CustomFunctionParameters, missing)
	}
}

// TestSubstituteConfigParametersKeepNumbers: numbers of the parameters document come back
// as written (found by FuzzSubstituteJSON: they went through float64, so a bound past 2^53
// changed and 1.50 became 1.5).
func TestSubstituteConfigParametersKeepNumbers(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"description":"{{x}}","maximum":12345678901234567890}`, `{"description":"y","maximum":12345678901234567890}`},
		{`{"description":"{{x}}","minimum":1.50,"enum":[1e2,-0]}`, `{"description":"y","enum":[1e2,-0],"minimum":1.50}`},
		{`{"description":"{{x}}"} trailing`, `{"description":"y"} trailing`}, // not JSON: plain text
	} {
		cfg := data.DefaultAgentConfig()
		cfg.LLMConfig.Tools = []*data.Tool{{Name: "f", Type: data.ToolCustomFunction, CustomFunctionParameters: str(c.in)}}
		got, _ := SubstituteConfig(cfg, map[string]any{"x": "y"})
		if s := *got.LLMConfig.Tools[0].CustomFunctionParameters; s != c.want {
			t.Errorf("parameters %s = %s, want %s", c.in, s, c.want)
		}
	}
}

// TestSubstituteConfigParametersKeysMadeEqual: members whose keys substitution makes
// equal keep the later one's value, in the document's order, every time (found by
// FuzzSubstitute: decoded into a map first, which one stayed was chance). Run 64 times,
// each a fresh map order.
func TestSubstituteConfigParametersKeysMadeEqual(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"{{b}}":{"type":"string"},"{{x}}":1}`, `{"b":1}`},
		{`{"{{x}}":1,"{{b}}":{"type":"string"}}`, `{"b":{"type":"string"}}`},
		{`{"properties":{"{{x}}":{"type":"number"},"b":{"type":"string"},"c":[{"{{b}}":1,"{{x}}":2}]}}`, `{"properties":{"b":{"type":"string"},"c":[{"b":2}]}}`},
	} {
		for range 64 {
			cfg := data.DefaultAgentConfig()
			cfg.LLMConfig.Tools = []*data.Tool{{Name: "f", Type: data.ToolCustomFunction, CustomFunctionParameters: str(c.in)}}
			got, _ := SubstituteConfig(cfg, map[string]any{"x": "b", "b": "b"})
			if s := *got.LLMConfig.Tools[0].CustomFunctionParameters; s != c.want {
				t.Fatalf("parameters %s = %s, want %s", c.in, s, c.want)
			}
		}
	}
}
