package validate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// mergeViaJSON is the definition of a group merge, as ApplyAgentBody did it before the
// structural merge: encode the stored group, overlay the given members (Merge), and
// decode the result strictly into a zero group.
func mergeViaJSON(dst any, patch members, path string, errs *Errors) {
	v := reflect.ValueOf(dst).Elem()
	obj := map[string]json.RawMessage{}
	for _, m := range patch.list {
		obj[string(m.key)] = m.raw
	}
	merged, err := Merge(v.Interface(), obj)
	if err != nil {
		panic(err)
	}
	v.SetZero()
	StrictObject(merged, dst, path, errs)
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

// FuzzMergeMatchesJSONRoundTrip checks the structural merge ApplyAgentBody uses against
// the definition (mergeViaJSON) on arbitrary update and create bodies: the same agent,
// field for field, and the same faults in the same order.
func FuzzMergeMatchesJSONRoundTrip(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/fuzz/FuzzAgentUpdate/*")
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
	f.Fuzz(func(t *testing.T, body []byte) {
		obj, err := Object(body)
		if err != nil {
			return
		}
		for _, creating := range []bool{false, true} {
			for i, base := range mergeBases() {
				got, gotErrs := applyAgentBody(base, obj, creating, testCatalog, mergeMembers)
				want, wantErrs := applyAgentBody(mergeBases()[i], obj, creating, testCatalog, mergeViaJSON)
				if !reflect.DeepEqual(got, want) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					t.Fatalf("base %d, body %s:\nstructural %s\nvia JSON   %s\n%#v\n%#v", i, body, g, w, got.LLMConfig, want.LLMConfig)
				}
				if !reflect.DeepEqual(gotErrs.order, wantErrs.order) || !reflect.DeepEqual(gotErrs.fields, wantErrs.fields) {
					t.Fatalf("base %d, body %s:\nstructural %v %v\nvia JSON   %v %v", i, body, gotErrs.order, gotErrs.fields, wantErrs.order, wantErrs.fields)
				}
			}
		}
	})
}
