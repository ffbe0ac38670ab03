package data_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
	"github.com/voiceapi/voiceapi/validate"
)

var catalog = func() *data.Catalog {
	cat, err := data.LoadCatalog("")
	if err != nil {
		panic(err)
	}
	return cat
}()

// typedApply is the merge as the service runs it: the body decoded strictly into a
// data.AgentUpdate, applied to base, then the rules of what was given.
func typedApply(base *data.Agent, body []byte, creating bool) (*data.Agent, error) {
	var in data.AgentUpdate
	decodeErr := strictjson.Decode(body, &in)
	if decodeErr != nil && data.ErrorCode(decodeErr) != data.EINVALID {
		return nil, decodeErr
	}
	a := in.Apply(base)
	faults := &validate.Errors{}
	addFaults(faults, decodeErr)
	faults.AddUncovered(validate.AgentChange(a, &in, creating, catalog))
	return a, faults.Err()
}

func addFaults(errs *validate.Errors, err error) {
	if e, ok := err.(*data.Error); ok {
		for _, p := range e.FieldPaths() {
			for _, m := range e.Fields[p] {
				errs.Add(p, m)
			}
		}
	}
}

var groups = []string{"call_config", "knowledge_base_config", "llm_config", "prompt_config", "stt_config", "tts_config", "analysis_config"}

// jsonApply is the definition of the merge, as updates ran it before the typed inputs:
// for each given group, encode the stored group, overlay the given members, and decode
// the result strictly into a zero group; a group naming
// another provider drops the stored provider-tied fields first, and an api_key given as
// the stored key's mask keeps the stored key.
func jsonApply(base *data.Agent, body []byte, creating bool) (*data.Agent, error) {
	obj, err := strictjson.Object(body)
	if err != nil {
		return nil, err
	}
	out := *base
	a := &out
	faults := &validate.Errors{}
	var given data.AgentUpdate // only which members were given, for AgentChange
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		raw := obj[k]
		switch {
		case k == "name":
			given.Name.Set = true
			strictjson.Strict(raw, &a.Name, k, faults)
		case slices.Contains(groups, k):
			trimmed := bytes.TrimSpace(raw)
			if string(trimmed) == "null" {
				faults.Addf(k, "The %s field must not be null.", k)
				continue
			}
			var patch map[string]json.RawMessage
			if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &patch) != nil {
				faults.Addf(k, "The %s field must be an object.", k)
				continue
			}
			jsonMergeGroup(a, k, patch, faults, &given)
		case k == "id" || k == "workspace_id" || k == "status" || k == "published_version" ||
			k == "created_at" || k == "updated_at" || k == "published_at":
			faults.Addf(k, "The %s field is read-only.", k)
		default:
			faults.Addf(k, "The %s field is not a known field.", k)
		}
	}
	if creating && !given.Name.Set {
		faults.Required("name")
	}
	faults.AddUncovered(validate.AgentChange(a, &given, creating, catalog))
	return a, faults.Err()
}

func jsonMergeGroup(a *data.Agent, group string, patch map[string]json.RawMessage, faults *validate.Errors, given *data.AgentUpdate) {
	var provider *string
	if raw, ok := patch["provider"]; ok {
		var p string
		if json.Unmarshal(raw, &p) == nil {
			provider = &p
		}
	}
	switch group {
	case "call_config":
		given.CallConfig.Set = true
		a.CallConfig = viaJSON(a.CallConfig, patch, group, faults)
	case "knowledge_base_config":
		given.KnowledgeBaseConfig.Set = true
		a.KnowledgeBaseConfig = viaJSON(a.KnowledgeBaseConfig, patch, group, faults)
	case "prompt_config":
		given.PromptConfig.Set = true
		a.PromptConfig = viaJSON(a.PromptConfig, patch, group, faults)
	case "analysis_config":
		given.AnalysisConfig.Set = true
		a.AnalysisConfig = viaJSON(a.AnalysisConfig, patch, group, faults)
	case "stt_config":
		given.STTConfig.Set = true
		stored := a.STTConfig
		if provider != nil && *provider != stored.Provider {
			stored = data.STTConfig{Provider: stored.Provider}
		}
		a.STTConfig = viaJSON(stored, patch, group, faults)
	case "tts_config":
		given.TTSConfig.Set = true
		stored := a.TTSConfig
		if provider != nil && *provider != stored.Provider {
			stored = data.TTSConfig{Provider: stored.Provider}
		}
		a.TTSConfig = viaJSON(stored, patch, group, faults)
	case "llm_config":
		given.LLMConfig.Set = true
		_, given.LLMConfig.V.APIKey.Set = patch["api_key"]
		stored := a.LLMConfig
		switched := provider != nil && *provider != stored.Provider
		if switched {
			stored = data.LLMConfig{Provider: stored.Provider, Temperature: stored.Temperature,
				KnowledgeBaseIDs: stored.KnowledgeBaseIDs, Tools: stored.Tools}
		}
		merged := viaJSON(stored, patch, group, faults)
		if k := merged.APIKey; given.LLMConfig.V.APIKey.Set && k != nil && !switched && a.LLMConfig.APIKey != nil &&
			strings.HasPrefix(*k, "****") && *k == data.MaskSecret(*a.LLMConfig.APIKey) {
			merged.APIKey = a.LLMConfig.APIKey
		}
		a.LLMConfig = merged
	}
}

// viaJSON encodes stored, overlays patch and decodes the result strictly into a zero T.
func viaJSON[T any](stored T, patch map[string]json.RawMessage, path string, faults *validate.Errors) T {
	b, err := json.Marshal(stored)
	if err != nil {
		panic(err)
	}
	var merged map[string]json.RawMessage
	if err := json.Unmarshal(b, &merged); err != nil {
		panic(err)
	}
	for k, v := range patch {
		merged[k] = v // a member given as null stays null; arrays and objects are taken whole
	}
	var out T
	strictjson.StrictObject(merged, &out, path, faults)
	return out
}

// mergeBases are stored agents to merge into: the defaults, and an azure agent with tools
// of every type, one of them with nil arrays (as a record built in Go, not decoded, has).
func mergeBases() []*data.Agent {
	a := data.DefaultAgent()
	a.Name = "Stored"
	key := "gsk_stored_secret_1234"
	a.LLMConfig.APIKey = &key

	b := data.DefaultAgent()
	b.Name = "Azure"
	b.LLMConfig = data.LLMConfig{Provider: data.LLMAzure, Deployment: "gpt", Endpoint: "https://x.openai.azure.com", APIVersion: "2024-06-01", KnowledgeBaseIDs: nil}
	desc, dur := "Ends the call", 1500
	b.LLMConfig.Tools = []*data.Tool{
		{Name: "end", Type: data.ToolEndCall, Description: &desc},
		nil,
		{Name: "ivr", Type: data.ToolPressIVR, PauseDetectionDelayMS: &dur, CustomSIPHeaders: map[string]string{}, PhoneDirectory: []data.PhoneDirectoryEntry{},
			CustomFunctionHeaders: []string{}, CustomFunctionQuery: []string{}, CustomFunctionVariables: []string{}, SpeakDuringExecutionOptions: []string{}, Variables: []data.ToolVariable{}},
		{Name: "vars", Type: data.ToolExtractDynamicVariable, Variables: []data.ToolVariable{{Type: "string", Name: "n", Description: "d"}}},
	}
	b.TTSConfig = data.TTSConfig{Provider: data.TTSCartesia, Model: "sonic-3"}
	return []*data.Agent{a, b}
}

// FuzzMergeMatchesJSONRoundTrip holds the typed merge (data.AgentUpdate and the groups'
// Apply) to its definition, the JSON merge (jsonApply), on arbitrary update and create
// bodies: both accept or both refuse; an accepted body gives the same agent, encoded; a
// refused one the same faults on the same paths. One difference is by design and
// skipped: a provider that is not a string switched nothing in the definition but
// switches in the typed merge (the member is given, as ""), which only changes the
// faults beside the one the body already has on the provider.
func FuzzMergeMatchesJSONRoundTrip(f *testing.F) {
	seeds, _ := filepath.Glob("../validate/testdata/fuzz/FuzzAgentUpdate/*")
	for _, name := range seeds {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		// "go test fuzz v1\n[]byte(\"...\")"
		if i, j := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')'); i > 0 && j > i {
			if s, err := strconv.Unquote(string(b[i+1 : j])); err == nil {
				f.Add([]byte(s))
			}
		}
	}
	f.Add([]byte(`{"llm_config":{"tools":null,"temperature":null,"max_tokens":"x","provider":7}}`))
	f.Add([]byte(`{"llm_config":{"provider":"azure","deployment":"d","deployment":5},"tts_config":{"speed":null,"voice_id":null}}`))
	f.Add([]byte(`{"llm_config":{"api_key":"****1234"},"name":"x"}`))
	f.Add([]byte(`{"analysis_config":{"fields":[{"name":"outcome","type":"enum","description":"d","choices":["a","a"]},{"name":"1x","type":"date"}],"success_criterion":null,"auto":true}}`))
	f.Add([]byte(`{"analysis_config":{"fields":null,"summary":"yes","success_criterion":"Booked"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, creating := range []bool{false, true} {
			for i, base := range mergeBases() {
				got, gotErr := typedApply(base, body, creating)
				want, wantErr := jsonApply(mergeBases()[i], body, creating)
				if (gotErr == nil) != (wantErr == nil) {
					t.Fatalf("base %d, body %s:\ntyped %v\nvia JSON %v", i, body, gotErr, wantErr)
				}
				if wantErr == nil {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					if string(g) != string(w) {
						t.Fatalf("base %d, body %s:\ntyped    %s\nvia JSON %s", i, body, g, w)
					}
					continue
				}
				if data.ErrorCode(wantErr) != data.EINVALID || data.ErrorCode(gotErr) != data.EINVALID {
					if data.ErrorCode(gotErr) != data.ErrorCode(wantErr) {
						t.Fatalf("body %s: typed %v, via JSON %v", body, gotErr, wantErr)
					}
					continue
				}
				g, w := gotErr.(*data.Error).Fields, wantErr.(*data.Error).Fields
				if byDesign(g) || byDesign(w) || givesNameTwice(body) {
					continue
				}
				if !reflect.DeepEqual(g, w) {
					t.Fatalf("base %d, body %s:\ntyped    %v\nvia JSON %v", i, body, g, w)
				}
				// The order too, which makes the message, but where the definition put the
				// masked api_key fault among the decoder's (the typed path reports it first
				// among the rules').
				gp, wp := gotErr.(*data.Error).FieldPaths(), wantErr.(*data.Error).FieldPaths()
				if _, masked := g["llm_config.api_key"]; !masked && !slices.Equal(gp, wp) {
					t.Fatalf("base %d, body %s: faults in order\ntyped    %v\nvia JSON %v", i, body, gp, wp)
				}
			}
		}
	})
}

// byDesign reports whether faults hold the difference FuzzMergeMatchesJSONRoundTrip
// skips: a provider of the wrong type.
func byDesign(fields map[string][]string) bool {
	for p := range fields {
		if strings.HasSuffix(p, ".provider") && fields[p][0] == "The "+p+" field must be a string." {
			return true
		}
	}
	return false
}

// givesNameTwice reports a body with a member name given twice: both paths refuse it,
// but the typed one decodes the rest as well (one 422 with every fault) where the JSON
// path stops at the duplicate.
func givesNameTwice(body []byte) bool {
	_, err := strictjson.Object(body)
	return err != nil && strings.Contains(err.Error(), "given more than once")
}
