package data

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Kinds of provider a catalog lists models for.
const (
	KindLLM = "llm"
	KindSTT = "stt"
	KindTTS = "tts"
)

//go:embed catalog.json
var embeddedCatalog []byte

// Catalog lists the models valid for each provider (conventions §7), by kind and provider.
// Its JSON is the body of GET /api/v1/catalog. internal and azure accept any model name:
// they name models of the operator's own server or deployment, so their lists are empty.
// Treat a loaded Catalog as read-only: it is shared by every request.
type Catalog struct {
	LLM map[string][]string `json:"llm"`
	STT map[string][]string `json:"stt"`
	TTS map[string][]string `json:"tts"`
}

// anyModel are the providers whose model name is free.
var anyModel = map[string]bool{LLMInternal: true, LLMAzure: true}

// bedrockGeoPrefixes are the cross-region inference profile prefixes of Bedrock: the Claude
// 4 family is invoked as e.g. us.anthropic.claude-sonnet-4-5-20250929-v1:0, so a catalog
// entry also stands for each prefixed form.
var bedrockGeoPrefixes = []string{"us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global."}

// catalogFile is the shape of catalog.json and of an operator's file. Replace makes the
// operator's file the whole catalog instead of extending the embedded one.
type catalogFile struct {
	Replace bool                `json:"replace"`
	LLM     map[string][]string `json:"llm"`
	STT     map[string][]string `json:"stt"`
	TTS     map[string][]string `json:"tts"`
}

// LoadCatalog returns the catalog shipped in the binary, extended by the operator's JSON
// file at extraPath when it is not "". The file has the embedded catalog's shape, e.g.
// {"llm": {"groq": ["my-model"]}}; its models are added to the provider's list, or, with
// "replace": true at the top, it is the whole catalog. An unreadable or malformed file,
// an unknown kind or provider, or an empty model name is an error naming the file.
func LoadCatalog(extraPath string) (*Catalog, error) {
	base, err := parseCatalog(embeddedCatalog)
	if err != nil {
		return nil, fmt.Errorf("embedded catalog: %w", err)
	}
	cat := &Catalog{LLM: base.LLM, STT: base.STT, TTS: base.TTS}
	if extraPath == "" {
		return cat.complete(), nil
	}
	b, err := os.ReadFile(extraPath)
	if err != nil {
		return nil, fmt.Errorf("catalog file: %w", err)
	}
	extra, err := parseCatalog(b)
	if err != nil {
		return nil, fmt.Errorf("catalog file %s: %w", extraPath, err)
	}
	if extra.Replace {
		cat = &Catalog{}
	}
	cat.LLM = mergeModels(cat.LLM, extra.LLM)
	cat.STT = mergeModels(cat.STT, extra.STT)
	cat.TTS = mergeModels(cat.TTS, extra.TTS)
	return cat.complete(), nil
}

func parseCatalog(b []byte) (*catalogFile, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f catalogFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a catalog (want {\"llm\": {provider: [models]}, \"stt\": …, \"tts\": …}): %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	for _, k := range []struct {
		kind      string
		models    map[string][]string
		providers []string
	}{{KindLLM, f.LLM, LLMProviders}, {KindSTT, f.STT, STTProviders}, {KindTTS, f.TTS, TTSProviders}} {
		for provider, models := range k.models {
			if !slices.Contains(k.providers, provider) {
				return nil, fmt.Errorf("%s provider %q is not one of %s", k.kind, provider, strings.Join(k.providers, ", "))
			}
			for i, m := range models {
				if strings.TrimSpace(m) == "" {
					return nil, fmt.Errorf("%s.%s.%d: empty model name", k.kind, provider, i)
				}
			}
		}
	}
	return &f, nil
}

// mergeModels adds extra's models after base's, without repeats.
func mergeModels(base, extra map[string][]string) map[string][]string {
	out := map[string][]string{}
	for p, ms := range base {
		out[p] = slices.Clone(ms)
	}
	for p, ms := range extra {
		for _, m := range ms {
			if !slices.Contains(out[p], m) {
				out[p] = append(out[p], m)
			}
		}
	}
	return out
}

// complete gives every provider a list, [] when it has no models, so the JSON always
// names every provider.
func (c *Catalog) complete() *Catalog {
	for _, k := range []struct {
		m         *map[string][]string
		providers []string
	}{{&c.LLM, LLMProviders}, {&c.STT, STTProviders}, {&c.TTS, TTSProviders}} {
		if *k.m == nil {
			*k.m = map[string][]string{}
		}
		for _, p := range k.providers {
			if (*k.m)[p] == nil {
				(*k.m)[p] = []string{}
			}
		}
	}
	return c
}

// Valid reports whether model is valid for provider of the given kind (KindLLM, KindSTT,
// KindTTS). internal and azure accept any non-empty name; a Bedrock model may carry a
// cross-region inference profile prefix.
func (c *Catalog) Valid(kind, provider, model string) bool {
	if model == "" {
		return false
	}
	if kind == KindLLM && anyModel[provider] {
		return true
	}
	var models []string
	switch kind {
	case KindLLM:
		models = c.LLM[provider]
	case KindSTT:
		models = c.STT[provider]
	case KindTTS:
		models = c.TTS[provider]
	}
	if slices.Contains(models, model) {
		return true
	}
	if kind == KindLLM && provider == LLMBedrockClaude {
		for _, prefix := range bedrockGeoPrefixes {
			if rest, ok := strings.CutPrefix(model, prefix); ok && slices.Contains(models, rest) {
				return true
			}
		}
	}
	return false
}

// Models returns the models listed for a provider of the given kind (nil if none).
func (c *Catalog) Models(kind, provider string) []string {
	switch kind {
	case KindLLM:
		return c.LLM[provider]
	case KindSTT:
		return c.STT[provider]
	case KindTTS:
		return c.TTS[provider]
	}
	return nil
}
