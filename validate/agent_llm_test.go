package validate

import (
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
)

// Complete llm_config bodies, one per provider.
var llmExamples = map[string]string{
	data.LLMInternal:      `{"provider":"internal","model":"my-llama-70b","temperature":0.2,"base_url":"https://llm.internal.example/v1","api_key":null}`,
	data.LLMAzure:         `{"provider":"azure","deployment":"gpt-4o-prod","endpoint":"https://my-resource.openai.azure.com","api_version":"2024-10-21","api_key":"azure-key-0123456789"}`,
	data.LLMMistral:       `{"provider":"mistral","model":"mistral-small-latest","api_key":"mistral-key-0123456789"}`,
	data.LLMBedrockClaude: `{"provider":"bedrock_claude","model":"us.anthropic.claude-sonnet-4-5-20250929-v1:0","temperature":0.3,"region":"us-east-1","max_tokens":1024}`,
	data.LLMGroq:          `{"provider":"groq","model":"openai/gpt-oss-120b","temperature":0.7,"max_tokens":800}`,
}

// withLLM returns a stored agent whose llm_config is the example of provider.
func withLLM(provider string) func() *data.Agent {
	return func() *data.Agent {
		a, errs := applyAgentBody(stored(), mustObject(`{"llm_config":`+llmExamples[provider]+`}`), false, testCatalog)
		if errs.Err() != nil {
			panic(errs.Err())
		}
		return a
	}
}

func noTemperature() *data.Agent { a := stored(); a.LLMConfig.Temperature = nil; return a }

func mustObject(s string) map[string]json.RawMessage {
	obj, err := strictjson.Object([]byte(s))
	if err != nil {
		panic(err)
	}
	return obj
}

func llm(fields string) string { return `{"llm_config":{` + fields + `}}` }

func TestLLMConfig(t *testing.T) {
	for p, body := range llmExamples {
		runRules(t, stored, []ruleCase{{"example " + p, `{"llm_config":` + body + `}`, ""}})
	}
	const p = llmPrefix
	runRules(t, stored, storedLLMCases())
	runRules(t, withLLM(data.LLMInternal), internalLLMCases())
	runRules(t, noTemperature, temperatureRequiredCases())
	runRules(t, withLLM(data.LLMAzure), azureLLMCases())
	runRules(t, withLLM(data.LLMBedrockClaude), bedrockLLMCases())
	t.Run("bedrock without max_tokens", func(t *testing.T) {
		a := withLLM(data.LLMBedrockClaude)()
		a.LLMConfig.MaxTokens = nil
		_, faults := apply(t, a, false, llm(`"temperature":0.1`))
		if len(faults) != 1 || faults[p+"max_tokens"] == nil {
			t.Fatalf("got %v", faults)
		}
	})
	for _, prov := range []string{data.LLMMistral, data.LLMGroq, data.LLMBedrockClaude} {
		for _, m := range testCatalog.Models(data.KindLLM, prov) {
			runRules(t, withLLM(prov), []ruleCase{{prov + " " + m, llm(`"model":"` + m + `"`), ""}})
		}
	}
}

// llmPrefix starts the path of every llm_config field.
const llmPrefix = "llm_config."

// storedLLMCases are the llm_config cases of the agent as stored (groq).
func storedLLMCases() []ruleCase {
	const p = llmPrefix
	return []ruleCase{
		{"provider unknown", llm(`"provider":"openai","model":"gpt-4o"`), p + "provider"},
		{"provider spelled the service", llm(`"provider":"the service","model":"x"`), p + "provider"},
		{"model unknown for groq", llm(`"model":"gpt-4o"`), p + "model"},
		{"model empty", llm(`"model":""`), p + "model"},
		{"model of another provider", llm(`"model":"mistral-small-latest"`), p + "model"},
		{"temperature min", llm(`"temperature":0`), ""},
		{"temperature max", llm(`"temperature":1`), ""},
		{"temperature below", llm(`"temperature":-0.01`), p + "temperature"},
		{"temperature above", llm(`"temperature":1.01`), p + "temperature"},
		{"temperature null", llm(`"temperature":null`), p + "temperature"},
		{"deployment on groq", llm(`"deployment":"x"`), p + "deployment"},
		{"endpoint on groq", llm(`"endpoint":"https://x.example"`), p + "endpoint"},
		{"api_version on groq", llm(`"api_version":"2024-10-21"`), p + "api_version"},
		{"base_url on groq", llm(`"base_url":"https://x.example"`), p + "base_url"},
		{"region on groq", llm(`"region":"us-east-1"`), p + "region"},
		{"max_tokens on groq", llm(`"max_tokens":1`), ""},
		{"max_tokens zero", llm(`"max_tokens":0`), p + "max_tokens"},
		{"max_tokens null", llm(`"max_tokens":null`), p + "max_tokens"},
		{"api_key null", llm(`"api_key":null`), ""},
		{"api_key at max", llm(`"api_key":"` + str(MaxSecret) + `"`), ""},
		{"api_key too long", llm(`"api_key":"` + str(MaxSecret+1) + `"`), p + "api_key"},
		{"api_key empty", llm(`"api_key":""`), p + "api_key"},
		{"knowledge base id", llm(`"knowledge_base_ids":["kb_01JD6AAAAAAAAAAAAAAAAAAAAA"]`), ""},
		{"knowledge base id malformed", llm(`"knowledge_base_ids":["kb_01JD6AAAAAAAAAAAAAAAAAAAAA","agt_01JD6AAAAAAAAAAAAAAAAAAAAA"]`), p + "knowledge_base_ids.1"},
		{"knowledge base id repeated", llm(`"knowledge_base_ids":["kb_01JD6AAAAAAAAAAAAAAAAAAAAA","kb_01JD6AAAAAAAAAAAAAAAAAAAAA"]`), p + "knowledge_base_ids.1"},
		{"knowledge base ids null", llm(`"knowledge_base_ids":null`), p + "knowledge_base_ids"},
		{"knowledge base id null", llm(`"knowledge_base_ids":[null]`), p + "knowledge_base_ids.0"},
		{"tools null", llm(`"tools":null`), p + "tools"},
		{"tool null item", llm(`"tools":[null,{"name":"end","type":"end_call"},null]`), ""},
		{"tool names unique", llm(`"tools":[{"name":"end","type":"end_call"},null,{"name":"end","type":"press_ivr"}]`), p + "tools.2.name"},
		{"nested unknown field", llm(`"temprature":0.5`), p + "temprature"},
	}
}

// internalLLMCases are the llm_config cases of an agent on the internal provider.
func internalLLMCases() []ruleCase {
	const p = llmPrefix
	return []ruleCase{
		{"internal any model", llm(`"model":"anything-goes"`), ""},
		{"internal without base_url", llm(`"base_url":""`), p + "base_url"},
		{"internal base_url relative", llm(`"base_url":"/v1"`), p + "base_url"},
		{"internal base_url not http", llm(`"base_url":"ftp://x.example"`), p + "base_url"},
		{"internal base_url too long", llm(`"base_url":"https://x.example/` + str(MaxURL) + `"`), p + "base_url"},
		{"internal without model", llm(`"model":""`), p + "model"},
	}
}

// temperatureRequiredCases are the llm_config cases of an agent without a temperature.
func temperatureRequiredCases() []ruleCase {
	const p = llmPrefix
	return []ruleCase{
		{"internal requires temperature", llm(`"provider":"internal","model":"m","base_url":"http://10.0.0.1:8000/v1"`), p + "temperature"},
		{"bedrock requires temperature", llm(`"provider":"bedrock_claude","model":"anthropic.claude-haiku-4-5-20251001-v1:0","region":"eu-west-1","max_tokens":100`), p + "temperature"},
		{"groq does not", llm(`"model":"llama-3.1-8b-instant"`), ""},
		{"mistral does not", llm(`"provider":"mistral","model":"mistral-large-latest"`), ""},
	}
}

// azureLLMCases are the llm_config cases of an agent on azure.
func azureLLMCases() []ruleCase {
	const p = llmPrefix
	return []ruleCase{
		{"azure model optional", llm(`"model":""`), ""},
		{"azure any model", llm(`"model":"gpt-4.1-mini"`), ""},
		{"azure without deployment", llm(`"deployment":""`), p + "deployment"},
		{"azure without endpoint", llm(`"endpoint":""`), p + "endpoint"},
		{"azure without api_version", llm(`"api_version":""`), p + "api_version"},
		{"azure endpoint not a URL", llm(`"endpoint":"my-resource"`), p + "endpoint"},
		{"azure deployment too long", llm(`"deployment":"` + str(MaxIdentifier+1) + `"`), p + "deployment"},
		{"azure region", llm(`"region":"us-east-1"`), p + "region"},
	}
}

// bedrockLLMCases are the llm_config cases of an agent on bedrock_claude.
func bedrockLLMCases() []ruleCase {
	const p = llmPrefix
	return []ruleCase{
		{"bedrock bare model id", llm(`"model":"anthropic.claude-sonnet-4-20250514-v1:0"`), ""},
		{"bedrock global profile", llm(`"model":"global.anthropic.claude-haiku-4-5-20251001-v1:0"`), ""},
		{"bedrock unknown profile prefix", llm(`"model":"mars.anthropic.claude-haiku-4-5-20251001-v1:0"`), p + "model"},
		{"bedrock without region", llm(`"region":""`), p + "region"},
		{"bedrock region malformed", llm(`"region":"useast1"`), p + "region"},
		{"bedrock gov region", llm(`"region":"us-gov-west-1"`), ""},
		{"bedrock max_tokens min", llm(`"max_tokens":1`), ""},
		{"bedrock max_tokens zero", llm(`"max_tokens":0`), p + "max_tokens"},
	}
}

func TestLLMProviderSwitch(t *testing.T) {
	const p = "llm_config."
	t.Run("drops the old provider's fields", func(t *testing.T) {
		base := withLLM(data.LLMAzure)()
		base.LLMConfig.Tools = []*data.Tool{{Name: "end", Type: data.ToolEndCall}}
		a, faults := apply(t, base, false, llm(`"provider":"groq","model":"llama-3.1-8b-instant"`))
		if faults != nil {
			t.Fatal(faults)
		}
		c := a.LLMConfig
		if c.Deployment != "" || c.Endpoint != "" || c.APIVersion != "" || c.APIKey != nil {
			t.Errorf("azure fields dragged along: %+v", c)
		}
		if len(c.Tools) != 1 || c.Tools[0].Name != "end" {
			t.Errorf("tools not carried over: %v", c.Tools)
		}
	})
	t.Run("keeps temperature, requires the new provider's fields", func(t *testing.T) {
		_, faults := apply(t, stored(), false, llm(`"provider":"bedrock_claude"`))
		for _, f := range []string{p + "model", p + "region", p + "max_tokens"} {
			if faults[f] == nil {
				t.Errorf("no fault on %s", f)
			}
		}
		if len(faults) != 3 {
			t.Errorf("want 3 faults, got %v", faults)
		}
	})
	t.Run("same provider keeps stored fields", func(t *testing.T) {
		a, faults := apply(t, withLLM(data.LLMAzure)(), false, llm(`"provider":"azure","api_version":"2025-01-01-preview"`))
		if faults != nil || a.LLMConfig.Deployment != "gpt-4o-prod" || a.LLMConfig.APIVersion != "2025-01-01-preview" {
			t.Fatalf("faults %v, config %+v", faults, a.LLMConfig)
		}
	})
}

func TestMaskedAPIKey(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	base := func() *data.Agent {
		a := withLLM(data.LLMMistral)()
		s := secret
		a.LLMConfig.APIKey = &s
		return a
	}
	masked := data.MaskSecret(secret)
	t.Run("masked value keeps the secret", func(t *testing.T) {
		a, faults := apply(t, base(), false, llm(`"api_key":"`+masked+`","temperature":0.9`))
		if faults != nil || a.LLMConfig.APIKey == nil || *a.LLMConfig.APIKey != secret {
			t.Fatalf("faults %v, key %v", faults, a.LLMConfig.APIKey)
		}
	})
	t.Run("omitted keeps the secret", func(t *testing.T) {
		a, _ := apply(t, base(), false, llm(`"temperature":0.9`))
		if *a.LLMConfig.APIKey != secret {
			t.Fatal(*a.LLMConfig.APIKey)
		}
	})
	t.Run("null clears it", func(t *testing.T) {
		a, faults := apply(t, base(), false, llm(`"api_key":null`))
		if faults != nil || a.LLMConfig.APIKey != nil {
			t.Fatalf("faults %v, key %v", faults, a.LLMConfig.APIKey)
		}
	})
	t.Run("a new key replaces it", func(t *testing.T) {
		a, _ := apply(t, base(), false, llm(`"api_key":"sk-new-key-123456"`))
		if *a.LLMConfig.APIKey != "sk-new-key-123456" {
			t.Fatal(*a.LLMConfig.APIKey)
		}
	})
	t.Run("short secret round trip", func(t *testing.T) {
		a := base()
		short := "abc"
		a.LLMConfig.APIKey = &short
		got, faults := apply(t, a, false, llm(`"api_key":"****"`))
		if faults != nil || *got.LLMConfig.APIKey != "abc" {
			t.Fatalf("faults %v, key %v", faults, *got.LLMConfig.APIKey)
		}
	})
	runRules(t, base, []ruleCase{
		{"mask of another key", llm(`"api_key":"****zzzz"`), "llm_config.api_key"},
		{"mask across a provider switch", llm(`"provider":"groq","model":"llama-3.1-8b-instant","api_key":"` + masked + `"`), "llm_config.api_key"},
	})
	runRules(t, stored, []ruleCase{{"mask with no stored key", llm(`"api_key":"` + masked + `"`), "llm_config.api_key"}})
}

func TestMasked(t *testing.T) {
	a := stored()
	key := "sk-live-0123456789abcdef"
	a.LLMConfig.APIKey = &key
	m := a.Masked()
	if *m.LLMConfig.APIKey != "****cdef" || *a.LLMConfig.APIKey != key {
		t.Fatalf("masked %q, original %q", *m.LLMConfig.APIKey, *a.LLMConfig.APIKey)
	}
}
