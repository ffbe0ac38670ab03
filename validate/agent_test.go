package validate

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
)

var testCatalog = func() *data.Catalog {
	cat, err := data.LoadCatalog("")
	if err != nil {
		panic(err)
	}
	return cat
}()

// apply runs a body through applyAgentBody and returns the agent and its faults by path.
func apply(t *testing.T, base *data.Agent, creating bool, body string) (*data.Agent, map[string][]string) {
	t.Helper()
	obj, err := strictjson.Object([]byte(body))
	if err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	a, errs := applyAgentBody(base, obj, creating, testCatalog)
	if a == nil {
		t.Fatal("applyAgentBody returned no agent")
	}
	if err := errs.Err(); err != nil {
		return a, err.(*data.Error).Fields
	}
	return a, nil
}

// ruleCase is an update body and the one path it must fail on ("" when it is valid).
type ruleCase struct {
	name, body, fault string
}

func runRules(t *testing.T, base func() *data.Agent, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, faults := apply(t, base(), false, c.body)
			if c.fault == "" {
				if len(faults) != 0 {
					t.Fatalf("body %s: want no faults, got %v", c.body, faults)
				}
				return
			}
			if len(faults) != 1 || faults[c.fault] == nil {
				t.Fatalf("body %s: want exactly a fault on %s, got %v", c.body, c.fault, faults)
			}
		})
	}
}

// stored is a valid stored agent on the defaults.
func stored() *data.Agent {
	a := data.DefaultAgent()
	a.ID, a.WorkspaceID, a.Name = "agt_01JD6AAAAAAAAAAAAAAAAAAAAA", "ws_01JD6AAAAAAAAAAAAAAAAAAAAA", "Support"
	return a
}

func str(n int) string { return strings.Repeat("a", n) }

func TestAgentName(t *testing.T) {
	runRules(t, stored, []ruleCase{
		{"255 characters", `{"name":"` + str(255) + `"}`, ""},
		{"255 multibyte characters", `{"name":"` + strings.Repeat("é", 255) + `"}`, ""},
		{"256 characters", `{"name":"` + str(256) + `"}`, "name"},
		{"blank", `{"name":"  "}`, "name"},
		{"null", `{"name":null}`, "name"},
		{"number", `{"name":5}`, "name"},
	})
	t.Run("required on create", func(t *testing.T) {
		_, faults := apply(t, data.DefaultAgent(), true, `{}`)
		if len(faults) != 1 || faults["name"] == nil {
			t.Fatalf("want a fault on name, got %v", faults)
		}
	})
	t.Run("optional on update", func(t *testing.T) {
		a, faults := apply(t, stored(), false, `{"call_config":{"ring_duration_ms":10000}}`)
		if faults != nil || a.Name != "Support" {
			t.Fatalf("faults %v, name %q", faults, a.Name)
		}
	})
}

func TestCallConfig(t *testing.T) {
	runRules(t, stored, []ruleCase{
		{"max_call_duration_ms min", `{"call_config":{"max_call_duration_ms":60000}}`, ""},
		{"max_call_duration_ms max", `{"call_config":{"max_call_duration_ms":7200000}}`, ""},
		{"max_call_duration_ms integral float", `{"call_config":{"max_call_duration_ms":60000.0}}`, ""},
		{"max_call_duration_ms below", `{"call_config":{"max_call_duration_ms":59999}}`, "call_config.max_call_duration_ms"},
		{"max_call_duration_ms above", `{"call_config":{"max_call_duration_ms":7200001}}`, "call_config.max_call_duration_ms"},
		{"max_call_duration_ms fraction", `{"call_config":{"max_call_duration_ms":60000.5}}`, "call_config.max_call_duration_ms"},
		{"max_call_duration_ms null", `{"call_config":{"max_call_duration_ms":null}}`, "call_config.max_call_duration_ms"},
		{"max_call_duration_ms string", `{"call_config":{"max_call_duration_ms":"60000"}}`, "call_config.max_call_duration_ms"},
		{"ring_duration_ms min", `{"call_config":{"ring_duration_ms":5000}}`, ""},
		{"ring_duration_ms max", `{"call_config":{"ring_duration_ms":300000}}`, ""},
		{"ring_duration_ms below", `{"call_config":{"ring_duration_ms":4999}}`, "call_config.ring_duration_ms"},
		{"ring_duration_ms above", `{"call_config":{"ring_duration_ms":300001}}`, "call_config.ring_duration_ms"},
		{"unknown field", `{"call_config":{"ring_duration":5000}}`, "call_config.ring_duration"},
		{"group null", `{"call_config":null}`, "call_config"},
		{"group not an object", `{"call_config":[1]}`, "call_config"},
	})
}

func TestKnowledgeBaseConfig(t *testing.T) {
	runRules(t, stored, []ruleCase{
		{"chunks min", `{"knowledge_base_config":{"chunks_to_retrieve":1}}`, ""},
		{"chunks max", `{"knowledge_base_config":{"chunks_to_retrieve":10}}`, ""},
		{"chunks below", `{"knowledge_base_config":{"chunks_to_retrieve":0}}`, "knowledge_base_config.chunks_to_retrieve"},
		{"chunks above", `{"knowledge_base_config":{"chunks_to_retrieve":11}}`, "knowledge_base_config.chunks_to_retrieve"},
		{"threshold null", `{"knowledge_base_config":{"similarity_threshold":null}}`, ""},
		{"threshold min", `{"knowledge_base_config":{"similarity_threshold":0.30}}`, ""},
		{"threshold max", `{"knowledge_base_config":{"similarity_threshold":0.95}}`, ""},
		{"threshold below", `{"knowledge_base_config":{"similarity_threshold":0.29}}`, "knowledge_base_config.similarity_threshold"},
		{"threshold above", `{"knowledge_base_config":{"similarity_threshold":0.96}}`, "knowledge_base_config.similarity_threshold"},
		{"threshold string", `{"knowledge_base_config":{"similarity_threshold":"0.5"}}`, "knowledge_base_config.similarity_threshold"},
	})
	t.Run("null clears a stored threshold", func(t *testing.T) {
		base := stored()
		v := 0.5
		base.KnowledgeBaseConfig.SimilarityThreshold = &v
		a, faults := apply(t, base, false, `{"knowledge_base_config":{"similarity_threshold":null}}`)
		if faults != nil || a.KnowledgeBaseConfig.SimilarityThreshold != nil || a.KnowledgeBaseConfig.ChunksToRetrieve != 3 {
			t.Fatalf("faults %v, config %+v", faults, a.KnowledgeBaseConfig)
		}
	})
}

func TestPromptConfig(t *testing.T) {
	noWait := func() *data.Agent { a := stored(); a.PromptConfig.AISpeakWaitTime = nil; return a }
	runRules(t, stored, []ruleCase{
		{"prompt at max", `{"prompt_config":{"prompt":"` + str(MaxPrompt) + `"}}`, ""},
		{"prompt too long", `{"prompt_config":{"prompt":"` + str(MaxPrompt+1) + `"}}`, "prompt_config.prompt"},
		{"prompt empty", `{"prompt_config":{"prompt":""}}`, ""},
		{"first_speaker ai", `{"prompt_config":{"first_speaker":"ai"}}`, ""},
		{"first_speaker user", `{"prompt_config":{"first_speaker":"user"}}`, ""},
		{"first_speaker unknown", `{"prompt_config":{"first_speaker":"bot"}}`, "prompt_config.first_speaker"},
		{"first_speaker empty", `{"prompt_config":{"first_speaker":""}}`, "prompt_config.first_speaker"},
		{"ai_speak_after_silence not a boolean", `{"prompt_config":{"ai_speak_after_silence":"yes"}}`, "prompt_config.ai_speak_after_silence"},
		{"wait time given", `{"prompt_config":{"ai_speak_after_silence":true,"ai_speak_wait_time":1.5}}`, ""},
		{"wait time min", `{"prompt_config":{"ai_speak_wait_time":0}}`, ""},
		{"wait time max", `{"prompt_config":{"ai_speak_wait_time":5}}`, ""},
		{"wait time below", `{"prompt_config":{"ai_speak_wait_time":-0.01}}`, "prompt_config.ai_speak_wait_time"},
		{"wait time above", `{"prompt_config":{"ai_speak_wait_time":5.01}}`, "prompt_config.ai_speak_wait_time"},
		{"wait time null", `{"prompt_config":{"ai_speak_wait_time":null}}`, "prompt_config.ai_speak_wait_time"},
		{"welcome static", `{"prompt_config":{"welcome_message_type":"static","welcome_message":"Hi"}}`, ""},
		{"welcome dynamic without message", `{"prompt_config":{"welcome_message_type":"dynamic","welcome_message":""}}`, ""},
		{"welcome type unknown", `{"prompt_config":{"welcome_message_type":"random"}}`, "prompt_config.welcome_message_type"},
		{"static without message", `{"prompt_config":{"welcome_message_type":"static","welcome_message":""}}`, "prompt_config.welcome_message"},
		{"welcome message at max", `{"prompt_config":{"welcome_message":"` + str(MaxText) + `"}}`, ""},
		{"welcome message too long", `{"prompt_config":{"welcome_message":"` + str(MaxText+1) + `"}}`, "prompt_config.welcome_message"},
		{"welcome message null", `{"prompt_config":{"welcome_message":null}}`, "prompt_config.welcome_message"},
	})
	runRules(t, noWait, []ruleCase{
		{"silence on without wait time", `{"prompt_config":{"ai_speak_after_silence":true}}`, "prompt_config.ai_speak_wait_time"},
		{"silence off without wait time", `{"prompt_config":{"ai_speak_after_silence":false}}`, ""},
	})
}

func TestSTTConfig(t *testing.T) {
	runRules(t, stored, []ruleCase{
		{"deepgram", `{"stt_config":{"provider":"deepgram","model":"nova-2-phonecall"}}`, ""},
		{"assemblyai", `{"stt_config":{"provider":"assemblyai","model":"universal-streaming-english"}}`, ""},
		{"unknown provider", `{"stt_config":{"provider":"whisper","model":"x"}}`, "stt_config.provider"},
		{"switch without model", `{"stt_config":{"provider":"assemblyai"}}`, "stt_config.model"},
		{"model of another provider", `{"stt_config":{"provider":"assemblyai","model":"nova-3"}}`, "stt_config.model"},
		{"unknown model", `{"stt_config":{"model":"nova-9"}}`, "stt_config.model"},
		{"model null", `{"stt_config":{"model":null}}`, "stt_config.model"},
	})
	for _, p := range data.STTProviders {
		for _, m := range testCatalog.Models(data.KindSTT, p) {
			runRules(t, stored, []ruleCase{{p + " " + m, `{"stt_config":{"provider":"` + p + `","model":"` + m + `"}}`, ""}})
		}
	}
}

func TestAgentBodyFaultsAllAtOnce(t *testing.T) {
	_, faults := apply(t, stored(), false, `{
		"nme": "x",
		"id": "agt_x",
		"call_config": {"max_call_duration_ms": 1},
		"llm_config": {"temprature": 0.5, "tools": [{"name": "1bad", "type": "nope"}]},
		"prompt_config": {"first_speaker": null},
		"tts_config": {"speed": "fast"}
	}`)
	want := []string{
		"nme", "id", "call_config.max_call_duration_ms", "llm_config.temprature",
		"llm_config.tools.0.name", "llm_config.tools.0.type", "prompt_config.first_speaker", "tts_config.speed",
	}
	for _, p := range want {
		if faults[p] == nil {
			t.Errorf("no fault on %s", p)
		}
	}
	if len(faults) != len(want) {
		t.Errorf("want %d faults, got %d: %v", len(want), len(faults), faults)
	}
	if msg := faults["id"][0]; msg != "The id field is read-only." {
		t.Errorf("id: %q", msg)
	}
	if msg := faults["llm_config.temprature"][0]; msg != "The llm_config.temprature field is not a known field." {
		t.Errorf("temprature: %q", msg)
	}
}

func TestAgentBodyDecodeFaultHidesRuleFault(t *testing.T) {
	// "must be a number" alone: the rule "required when bedrock_claude" would only repeat it.
	_, faults := apply(t, stored(), false, `{"llm_config":{"provider":"bedrock_claude","model":"anthropic.claude-haiku-4-5-20251001-v1:0","region":"us-east-1","max_tokens":512,"temperature":"hot"}}`)
	if len(faults) != 1 || len(faults["llm_config.temperature"]) != 1 {
		t.Fatalf("got %v", faults)
	}
}

func TestEmptyBodyChangesNothing(t *testing.T) {
	base := stored()
	a, faults := apply(t, base, false, `{}`)
	if faults != nil {
		t.Fatal(faults)
	}
	if data.ETagOf(a) != data.ETagOf(base) {
		t.Fatalf("changed: %s", mustJSON(a))
	}
}

func TestApplyDoesNotModifyBase(t *testing.T) {
	base := stored()
	before := mustJSON(base)
	apply(t, base, false, `{"name":"New","llm_config":{"provider":"mistral","model":"mistral-small-latest","tools":[{"name":"end","type":"end_call"}]}}`)
	if mustJSON(base) != before {
		t.Fatal("base was modified")
	}
}

func TestCreateMergesIntoDefaults(t *testing.T) {
	a, faults := apply(t, data.DefaultAgent(), true, `{"name":"Sales","call_config":{"ring_duration_ms":20000},"tts_config":{"provider":"rime","model":"mistv2","speaker":"cove","streaming_latency":1}}`)
	if faults != nil {
		t.Fatal(faults)
	}
	def := data.DefaultAgentConfig()
	if a.CallConfig.MaxCallDurationMS != def.CallConfig.MaxCallDurationMS || a.CallConfig.RingDurationMS != 20000 {
		t.Errorf("call_config %+v", a.CallConfig)
	}
	if a.TTSConfig.VoiceID != nil {
		t.Errorf("the default voice_id was dragged into a rime config: %q", *a.TTSConfig.VoiceID)
	}
	if !reflect.DeepEqual(a.LLMConfig, def.LLMConfig) || a.Status != data.AgentStatusDraft {
		t.Errorf("llm_config %+v, status %q", a.LLMConfig, a.Status)
	}
}

func TestDefaultAgentIsValid(t *testing.T) {
	a, faults := apply(t, data.DefaultAgent(), true, `{"name":"Only a name"}`)
	if faults != nil {
		t.Fatal(faults)
	}
	var errs Errors
	ValidateAgent(a, testCatalog, &errs)
	if errs.Err() != nil {
		t.Fatal(errs.Err())
	}
}

func TestResponseSentBackIsAccepted(t *testing.T) {
	// A client reads an agent, edits nothing, and sends the record back without the read-only fields.
	base := stored()
	key := "gsk_live_0123456789abcdef"
	base.LLMConfig.APIKey = &key
	base.LLMConfig.Tools = []*data.Tool{nil, {Name: "end", Type: data.ToolEndCall}}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(mustJSON(base.Masked())), &obj); err != nil {
		t.Fatal(err)
	}
	for k := range readOnlyAgentFields {
		delete(obj, k)
	}
	a, errs := applyAgentBody(base, obj, false, testCatalog)
	if errs.Err() != nil {
		t.Fatal(errs.Err())
	}
	if mustJSON(a) != mustJSON(base) {
		t.Fatalf("round trip changed the agent:\n%s\n%s", mustJSON(a), mustJSON(base))
	}
}

func TestValidatePublish(t *testing.T) {
	for _, c := range []struct {
		desc  *string
		fault bool
	}{{nil, false}, {ptr(str(1000)), false}, {ptr(str(1001)), true}} {
		var errs Errors
		ValidatePublish(c.desc, &errs)
		if errs.Has("description") != c.fault {
			t.Errorf("description %v: fault %v", c.desc, errs.Has("description"))
		}
	}
}

func TestKnowledgeBaseRefs(t *testing.T) {
	known := "kb_01JD6AAAAAAAAAAAAAAAAAAAAA"
	var errs Errors
	KnowledgeBaseRefs([]string{known, "kb_01JD6BBBBBBBBBBBBBBBBBBBBB"}, func(id string) bool { return id == known }, &errs)
	if errs.Len() != 1 || !errs.Has("llm_config.knowledge_base_ids.1") {
		t.Fatalf("got %v", errs.Err())
	}
}

func ptr[T any](v T) *T { return &v }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
