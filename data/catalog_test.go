package data

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEmbeddedCatalog(t *testing.T) {
	cat, err := LoadCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind, provider, model string
		valid                 bool
	}{
		{KindLLM, LLMGroq, DefaultLLMModel, true},
		{KindLLM, LLMGroq, "gpt-4o", false},
		{KindLLM, LLMMistral, "mistral-small-latest", true},
		{KindLLM, LLMMistral, "llama-3.3-70b-versatile", false},
		{KindLLM, LLMInternal, "whatever-runs-here", true},
		{KindLLM, LLMAzure, "gpt-4.1", true},
		{KindLLM, LLMAzure, "", false},
		{KindLLM, LLMBedrockClaude, "anthropic.claude-haiku-4-5-20251001-v1:0", true},
		{KindLLM, LLMBedrockClaude, "eu.anthropic.claude-haiku-4-5-20251001-v1:0", true},
		{KindLLM, LLMBedrockClaude, "xx.anthropic.claude-haiku-4-5-20251001-v1:0", false},
		{KindLLM, "openai", "gpt-4o", false},
		{KindSTT, STTDeepgram, DefaultSTTModel, true},
		{KindSTT, STTAssemblyAI, "universal-streaming-english", true},
		{KindSTT, STTAssemblyAI, "nova-3", false},
		{KindTTS, TTSElevenLabs, DefaultTTSModel, true},
		{KindTTS, TTSElevenLabs, "eleven_v3", true},
		{KindTTS, TTSCartesia, "sonic-3", true},
		{KindTTS, TTSRime, "mistv2", true},
		{KindTTS, TTSRime, "sonic-3", false},
		{"asr", STTDeepgram, "nova-3", false},
	} {
		if got := cat.Valid(c.kind, c.provider, c.model); got != c.valid {
			t.Errorf("Valid(%s, %s, %s) = %v", c.kind, c.provider, c.model, got)
		}
	}
}

func TestCatalogJSONNamesEveryProvider(t *testing.T) {
	cat, _ := LoadCatalog("")
	b, err := json.Marshal(cat)
	if err != nil {
		t.Fatal(err)
	}
	var shape map[string]map[string][]string
	if err := json.Unmarshal(b, &shape); err != nil {
		t.Fatal(err)
	}
	for kind, providers := range map[string][]string{KindLLM: LLMProviders, KindSTT: STTProviders, KindTTS: TTSProviders} {
		for _, p := range providers {
			if shape[kind][p] == nil {
				t.Errorf("%s.%s missing or null in %s", kind, p, b)
			}
		}
	}
}

func TestOperatorCatalogExtends(t *testing.T) {
	cat, err := LoadCatalog(writeFile(t, `{"llm":{"groq":["my-finetune","llama-3.3-70b-versatile"]},"tts":{"rime":["rime-next"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !cat.Valid(KindLLM, LLMGroq, "my-finetune") || !cat.Valid(KindLLM, LLMGroq, DefaultLLMModel) || !cat.Valid(KindTTS, TTSRime, "rime-next") {
		t.Fatal("operator models or embedded models missing")
	}
	if n := len(slices.DeleteFunc(slices.Clone(cat.LLM[LLMGroq]), func(m string) bool { return m != DefaultLLMModel })); n != 1 {
		t.Errorf("%s listed %d times", DefaultLLMModel, n)
	}
	if !cat.Valid(KindSTT, STTDeepgram, "nova-3") {
		t.Error("untouched providers lost their models")
	}
}

func TestOperatorCatalogReplaces(t *testing.T) {
	cat, err := LoadCatalog(writeFile(t, `{"replace":true,"llm":{"groq":["only-this"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if cat.Valid(KindLLM, LLMGroq, DefaultLLMModel) || !cat.Valid(KindLLM, LLMGroq, "only-this") || cat.Valid(KindSTT, STTDeepgram, "nova-3") {
		t.Fatalf("replace did not replace: %+v", cat)
	}
	if cat.STT[STTDeepgram] == nil {
		t.Error("providers without models must still be listed as []")
	}
}

func TestOperatorCatalogErrors(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":            `{"llm":`,
		"not an object":       `["groq"]`,
		"unknown kind":        `{"asr":{"deepgram":["x"]}}`,
		"unknown provider":    `{"llm":{"openai":["gpt-4o"]}}`,
		"stt provider in tts": `{"tts":{"deepgram":["x"]}}`,
		"empty model":         `{"stt":{"deepgram":[""]}}`,
		"models not a list":   `{"stt":{"deepgram":"nova-3"}}`,
		"trailing value":      `{} {}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, content)
			_, err := LoadCatalog(path)
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("want an error naming %s, got %v", path, err)
			}
		})
	}
	if _, err := LoadCatalog(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing file must be an error")
	}
}
