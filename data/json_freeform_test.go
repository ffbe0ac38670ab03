package data

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// decoderReading is how a free-form value was read before parseFreeForm: a json.Decoder
// with UseNumber, nothing allowed after the value.
func decoderReading(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the value")
	}
	return v, nil
}

var freeFormSeeds = []string{
	`{"n":12345678901234567890,"f":1.50,"e":-1E+400,"z":0,"a":[1,"x",true,false,null,{}],"o":{"":[]}}`,
	` [ ] `, `{}`, `null`, `true`, `"x"`, `-0.0e-0`, `01`, `1.`, `.5`, `1e`, `--1`, `1-2`, `+1`,
	`{"a":1,"a":2}`, `{"a" : 1 , "b":[ 1 , 2 ] }`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a"}`, `{1:2}`,
	`"\u00e9\ud83d\ude00\n\"\\\/"`, `"\ud800"`, `"\x"`, "\"\xff\xfe ok\"", "\"tab\there\"", `"é"`,
	`"unterminated`, `"\`, `[`, `{"a":`, `nul`, `truex`, `1 2`, ``, `  `, `{"x":1}x`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
}

// FuzzParseFreeFormMatchesDecoder: parseFreeForm accepts what the Decoder accepts, with
// the same value (numbers' text, strings with escapes, surrogates and invalid UTF-8,
// members given twice, nesting at encoding/json's bound and past it).
func FuzzParseFreeFormMatchesDecoder(f *testing.F) {
	for _, s := range freeFormSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantErr := decoderReading(b)
		got, err := parseFreeForm(b)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: parseFreeForm error %v, Decoder error %v", b, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: parseFreeForm %#v, Decoder %#v", b, got, want)
		}
		if wantErr == nil {
			// The same value as a row's free-form member, nested (an agent's
			// default_variables) and at the top (a number's variables).
			rowMatchesDecoder[AgentConfig](t, `{"prompt_config":{"prompt":"p","default_variables":`+string(b)+`,"timezone":"UTC"},"stt_config":{"model":"m"}}`)
			rowMatchesDecoder[Number](t, `{"id":"num_1","variables":`+string(b)+`,"nickname":"n"}`)
			// A tool call's arguments and result in an item; a conversation's variables.
			rowMatchesDecoder[ConversationItem](t, `{"role":"tool","tool_call":{"id":"c","arguments":`+string(b)+`,"result":`+string(b)+`,"error":false}}`)
			rowMatchesDecoder[StoredConversation](t, `{"id":"conv_1","variables":{"v":`+string(b)+`},"messages":[{"tool_call":{"result":`+string(b)+`}}]}`)
		}
	})
}

// rowMatchesDecoder: DecodeJSON, taking a row's json.Unmarshal for a T, agrees with the
// Decoder it replaced on raw: both refuse it, or both give the same T.
func rowMatchesDecoder[T any](t *testing.T, raw string) {
	t.Helper()
	var got, want T
	err := DecodeJSON([]byte(raw), &got)
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	wantErr := dec.Decode(&want)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%T %q: row error %v, Decoder error %v", got, raw, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%T %q:\nrow     %#v\nDecoder %#v", got, raw, got, want)
	}
}

// TestDecodeJSONFreeFormErrors: what the in-place reading refuses still gets the
// Decoder's error, and a map refuses a value of another kind as before.
func TestDecodeJSONFreeFormErrors(t *testing.T) {
	for _, s := range []string{`{"a":1,}`, `[1]`, `"x"`, `{"a":1} x`, ``} {
		var m map[string]any
		err := DecodeJSON([]byte(s), &m)
		var v any
		vErr := DecodeJSON([]byte(s), &v)
		_, wantErr := decoderReading([]byte(s))
		if err == nil || (vErr == nil) != (wantErr == nil) {
			t.Errorf("%q: map error %v, any error %v, Decoder error %v", s, err, vErr, wantErr)
		}
	}
	var o JSONObject
	if err := json.Unmarshal([]byte(`{"o":[1]}`), &struct{ O *JSONObject }{&o}); err == nil || !strings.Contains(err.Error(), "it must be an object") {
		t.Errorf("an array as a JSONObject: %v", err)
	}
	if err := json.Unmarshal([]byte(`null`), &o); err != nil || o != nil {
		t.Errorf("null as a JSONObject: %v, %#v", err, o)
	}
}

// TestCallRowShadowsEveryFreeFormMember: every member of Call that may hold a number in
// an any is one callRow decodes through JSONObject; a new one left out would come back
// from bbolt as a rounded float64.
func TestCallRowShadowsEveryFreeFormMember(t *testing.T) {
	row := reflect.TypeFor[callRow]()
	for i := range reflect.TypeFor[Call]().NumField() {
		f := reflect.TypeFor[Call]().Field(i)
		if !holdsAny(f.Type) {
			continue
		}
		shadow, ok := row.FieldByName(f.Name)
		if !ok || len(shadow.Index) != 1 || holdsAny(shadow.Type) || shadow.Tag.Get("json") != f.Tag.Get("json") {
			t.Errorf("Call.%s holds an any: callRow must shadow it with a type keeping numbers (JSONObject), same tag", f.Name)
		}
	}
}

// TestRowsHoldNoAny: each row type shadows every free-form member of the record it
// decodes, so DecodeJSON takes json.Unmarshal for it, never the Decoder's copy; a member
// left out, or a new free-form member of the record, fails here (it would then take the
// Decoder, or with a row decoder come back a rounded float64). The bbolt rows' shapes
// (bolt/agent_row.go agentRowJSON, bolt/agents.go versionRow) are checked as written there.
func TestRowsHoldNoAny(t *testing.T) {
	type boltAgentRow struct {
		StoredAgent
		Row          int             `json:"row"`
		APIKeySealed *string         `json:"api_key_sealed"`
		PromptConfig PromptConfigRow `json:"prompt_config"`
	}
	type boltVersionRow struct {
		AgentVersion
		PromptConfig PromptConfigRow `json:"prompt_config"`
	}
	for _, c := range []struct{ record, row reflect.Type }{
		{reflect.TypeFor[Call](), reflect.TypeFor[callRow]()},
		{reflect.TypeFor[AgentConfig](), reflect.TypeFor[agentConfigRow]()},
		{reflect.TypeFor[PromptConfig](), reflect.TypeFor[promptConfigRow]()},
		{reflect.TypeFor[Number](), reflect.TypeFor[numberRow]()},
		{reflect.TypeFor[Recipient](), reflect.TypeFor[recipientRow]()},
		{reflect.TypeFor[StoredAgent](), reflect.TypeFor[boltAgentRow]()},
		{reflect.TypeFor[AgentVersion](), reflect.TypeFor[boltVersionRow]()},
		{reflect.TypeFor[ToolCallItem](), reflect.TypeFor[toolCallValue]()},
		{reflect.TypeFor[ConversationItem](), reflect.TypeFor[conversationItemRow]()},
		{reflect.TypeFor[StoredConversation](), reflect.TypeFor[storedConversationRow]()},
	} {
		if !holdsAny(c.record) {
			t.Errorf("%v holds no any: its row type is not needed", c.record)
		}
		if holdsAny(c.row) {
			t.Errorf("%v holds an any its row type %v does not shadow", c.record, c.row)
		}
	}
}

// TestHoldsAnySeesShadowing: a member a shallower one of the same JSON name shadows is
// never decoded, so it does not count; every other any does, through embedded structs,
// pointers and containers, a tie at one depth included (encoding/json drops both, but
// saying "holds one" costs only the Decoder).
func TestHoldsAnySeesShadowing(t *testing.T) {
	type free struct {
		M map[string]any `json:"m"`
	}
	type untagged struct{ M any }
	type alsoUntagged struct{ M []any }
	type wrapsUntagged struct{ untagged }
	type shadowOnly struct{ M JSONObject }
	type hidden struct {
		m any
		M any `json:"-"`
	}
	for _, c := range []struct {
		name string
		t    reflect.Type
		want bool
	}{
		{"a free-form member", reflect.TypeFor[free](), true},
		{"in an embedded struct", reflect.TypeFor[struct{ free }](), true},
		{"through an embedded pointer", reflect.TypeFor[struct{ *free }](), true},
		{"in a slice of them", reflect.TypeFor[[]struct{ free }](), true},
		{"shadowed", reflect.TypeFor[struct {
			free
			M JSONObject `json:"m"`
		}](), false},
		{"shadowed through a pointer", reflect.TypeFor[struct {
			*free
			M JSONObject `json:"m"`
		}](), false},
		{"shadowed by name, untagged", reflect.TypeFor[struct {
			untagged
			M JSONObject
		}](), false},
		{"shadowed under another name", reflect.TypeFor[struct {
			free
			M JSONObject `json:"n"`
		}](), true},
		{"shadowed by an any", reflect.TypeFor[struct {
			free
			M any `json:"m"`
		}](), true},
		{"a tie at one depth", reflect.TypeFor[struct {
			untagged
			alsoUntagged
		}](), true},
		{"an embedded struct with a name", reflect.TypeFor[struct {
			free `json:"f"`
			M    JSONObject `json:"m"`
		}](), true},
		{"an embedded struct met deeper first counts at its shallowest", reflect.TypeFor[struct {
			wrapsUntagged
			untagged
			shadowOnly
		}](), true},
		{"unexported or skipped", reflect.TypeFor[hidden](), false},
	} {
		if got := holdsAnyWalk(c.t, map[reflect.Type]bool{}); got != c.want {
			t.Errorf("%s: holdsAny %v, want %v", c.name, got, c.want)
		}
	}
}

// TestDecodeRowsMatchDecoder: an agent's configuration, a number and a recipient, every
// member set, decode by their row types as the Decoder decodes them whole, numbers in
// their free-form values as written; members absent keep what they held, as with
// json.Unmarshal.
func TestDecodeRowsMatchDecoder(t *testing.T) {
	cfg := DefaultAgentConfig()
	cfg.PromptConfig.Timezone = "Europe/Paris"
	cfg.LLMConfig.Tools = []*Tool{{Name: "end", Type: ToolEndCall}, nil}
	raw, err := json.Marshal(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	exact := `{"n":12345678901234567890,"f":0.1000000000000000055511151231257827,"l":[1.50,{"d":1e400}],"s":"x"}`
	agent := strings.Replace(string(raw), `"default_variables":{}`, `"default_variables":`+exact, 1)
	if agent == string(raw) {
		t.Fatalf("no default_variables in %s", raw)
	}
	rowMatchesDecoder[AgentConfig](t, agent)
	rowMatchesDecoder[Number](t, `{"id":"num_1","workspace_id":"ws_1","phone_number":"+14155550100","nickname":"n","provider":"twilio",
		"inbound_agent_id":"agt_1","outbound_agent_id":null,"variables":`+exact+`,"created_at":"2026-11-21T10:00:00Z","updated_at":"2026-11-21T10:00:00Z"}`)
	rowMatchesDecoder[Recipient](t, `{"id":"rcp_1","campaign_id":"cmp_1","workspace_id":"ws_1","phone_number":"+14155550100","timezone":"UTC",
		"variables":`+exact+`,"state":"pending","outcome":null,"attempt_count":1,"attempts":[],"next_at":null,"lease_until":null,
		"call_id":null,"line":2,"created_at":"2026-11-21T10:00:00Z","updated_at":"2026-11-21T10:00:00Z"}`)

	var c AgentConfig
	if err := DecodeJSON([]byte(agent), &c); err != nil || c.PromptConfig.DefaultVariables["n"] != json.Number("12345678901234567890") ||
		c.PromptConfig.Timezone != "Europe/Paris" || len(c.LLMConfig.Tools) != 2 {
		t.Errorf("agent's configuration decoded %v, %#v", err, c)
	}
	kept := Number{Nickname: "kept", Variables: map[string]any{"k": "v"}}
	if err := DecodeJSON([]byte(`{"id":"num_2"}`), &kept); err != nil || kept.Nickname != "kept" || kept.Variables["k"] != "v" {
		t.Errorf("decoding into a set number: %v, %#v", err, kept)
	}
	for _, bad := range []string{`{"variables":[1]}`, `{"variables":1.5}`, `{"id":"x"} {}`} {
		if err := DecodeJSON([]byte(bad), &Number{}); err == nil {
			t.Errorf("a number %s was taken", bad)
		}
	}
	for _, bad := range []string{`{"prompt_config":{"default_variables":"x"}}`, `{"prompt_config":[]}`, `{} {}`} {
		if err := DecodeJSON([]byte(bad), &AgentConfig{}); err == nil {
			t.Errorf("an agent's configuration %s was taken", bad)
		}
	}
}

// TestDecodeCallRowMatchesDecoder: a call with every member set decodes by its row
// decoder as the Decoder decodes it whole, numbers in its free-form values as written.
func TestDecodeCallRowMatchesDecoder(t *testing.T) {
	raw := []byte(`{"id":"call_1","workspace_id":"ws_1","agent_id":"agt_1","agent_version":3,"number_id":"num_1",
	"direction":"inbound","from_number":"+14155550100","to_number":"+14155550101","status":"ended",
	"started_at":"2026-11-21T10:00:00Z","ended_at":"2026-11-21T10:01:00.5Z","duration_ms":60500,
	"disconnection_reason":"user_hangup","transcript":[{"role":"agent","content":"Hé \u00e9","start_ms":0}],
	"recording_url":"https://example.com/r.wav","variables":{"n":12345678901234567890,"s":"x","l":[1.50,{"d":1e400}]},
	"analysis":{"score":0.1000000000000000055511151231257827},"analysis_source":"llm","analyzed_at":"2026-11-21T10:02:00Z",
	"analysis_error":null,"metadata":{},"usage":null,"cost":null,"legal_hold":true,
	"created_at":"2026-11-21T10:00:00Z","updated_at":"2026-11-21T10:02:00Z"}`)
	var got Call
	if err := DecodeJSON(raw, &got); err != nil {
		t.Fatal(err)
	}
	var want Call
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("row decoder:\n%#v\nDecoder:\n%#v", got, want)
	}
	if got.Variables["n"] != json.Number("12345678901234567890") || got.Metadata == nil || got.AgentVersion == nil || *got.AgentVersion != 3 {
		t.Errorf("decoded %#v", got)
	}
	// Absent members stay as they were, as with json.Unmarshal; present ones replace.
	kept := Call{Metadata: map[string]any{"k": "v"}}
	if err := DecodeJSON([]byte(`{"variables":{"a":1}}`), &kept); err != nil || kept.Metadata["k"] != "v" || kept.Variables["a"] != json.Number("1") {
		t.Errorf("decoding into a set call: %v, %#v", err, kept)
	}
	if err := DecodeJSON([]byte(`{"id":"x"} {}`), &got); err == nil {
		t.Error("data after the call was taken")
	}
}

// BenchmarkDecodeCallRow: a stored call (fakecalls' shape: a transcript, variables,
// analysis, metadata) by DecodeJSON's row decoder and by the Decoder it replaced.
func BenchmarkDecodeCallRow(b *testing.B) {
	raw := []byte(`{"id":"call_01JD6ZZZZZZZZZZZZZZZZZZZZZ","workspace_id":"ws_01JD6000000000000000000000","agent_id":"agt_01JD6000000000000000000000",
	"agent_version":1,"number_id":"num_01JD6000000000000000000000","direction":"inbound","from_number":"+14155550100","to_number":"+14155550101",
	"status":"ended","started_at":"2026-11-21T10:00:00Z","ended_at":"2026-11-21T10:03:20Z","duration_ms":200000,"disconnection_reason":"user_hangup",
	"transcript":[{"role":"agent","content":"Hello, how can I help you today?","start_ms":0},{"role":"user","content":"I would like to cancel my order.","start_ms":2100},
	{"role":"agent","content":"Of course. May I have the order number?","start_ms":4800},{"role":"user","content":"It is 4417.","start_ms":7300}],
	"recording_url":null,"variables":{"customer_name":"Ada","order":4417},"analysis":{"call_successful":true,"summary":"The caller cancelled an order.","score":0.92},
	"analysis_source":"runtime","analyzed_at":"2026-11-21T10:03:21Z","analysis_error":null,"metadata":{"campaign":"spring","attempt":1},
	"usage":null,"cost":null,"legal_hold":false,"created_at":"2026-11-21T10:00:00Z","updated_at":"2026-11-21T10:03:21Z"}`)
	b.Run("row", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c Call
			if err := DecodeJSON(raw, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c Call
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeAgentConfigRow: an agent's configuration (20 tools, two default
// variables; a PostgreSQL agent's or version's config column) by DecodeJSON's row decoder
// and by the Decoder it replaced.
func BenchmarkDecodeAgentConfigRow(b *testing.B) {
	cfg := DefaultAgentConfig()
	description := "Looks the order up."
	for i := range 20 {
		cfg.LLMConfig.Tools = append(cfg.LLMConfig.Tools, &Tool{Name: "tool_" + strconv.Itoa(i), Type: ToolCustomFunction,
			Description: &description, HTTPMethod: "POST", APIEndpoint: "https://api.example.com/orders", CustomFunctionVariables: []string{"order_id"}})
	}
	cfg.PromptConfig.DefaultVariables = map[string]any{"plan": "gold", "order": json.Number("4417")}
	raw, err := json.Marshal(&cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("row", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c AgentConfig
			if err := DecodeJSON(raw, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c AgentConfig
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestStorageRowsTakeNoDecoder: a conversation's row and its items' (bbolt's rows,
// PostgreSQL's item column) decode without the Decoder's copy, its numbers as written; a row type
// left out of DecodeJSON (or a member its row leaves unshadowed, through holdsAny) takes
// the Decoder again and fails here.
func TestStorageRowsTakeNoDecoder(t *testing.T) {
	uses := 0
	saved := decodeUseNumber
	decodeUseNumber = func(b []byte, v any) error { uses++; return saved(b, v) }
	t.Cleanup(func() { decodeUseNumber = saved })
	for _, c := range rowSamples() {
		uses = 0
		if err := DecodeJSON([]byte(c.raw), c.into()); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if uses != 0 {
			t.Errorf("%s took the Decoder", c.name)
		}
	}
}

// rowSamples are stored rows with every member set and free-form values whose numbers a
// float64 would round.
func rowSamples() []struct {
	name string
	raw  string
	into func() any
} {
	const exact = `{"n":12345678901234567890,"f":0.1000000000000000055511151231257827,"l":[1.50,{"d":1e400}],"s":"x"}`
	item := `{"role":"tool","content":"lookup() → {}","tool_call":{"id":"c1","name":"lookup","arguments":` + exact + `,"result":[` + exact + `,3.0],"error":true},
		"knowledge":[{"knowledge_base_id":"kb_1","source_id":"src_1","text":"t","score":0.5}],"latency_ms":{"first_token":3,"total":9},
		"usage":{"input_tokens":5,"output_tokens":1},"created_at":"2026-11-21T10:00:00Z"}`
	agentItem := `{"role":"agent","content":"Hi","tool_call":null,"knowledge":null,"latency_ms":null,"usage":null,"created_at":"2026-11-21T10:00:00Z"}`
	return []struct {
		name string
		raw  string
		into func() any
	}{
		{"a conversation's item", item, func() any { return new(ConversationItem) }},
		{"an agent's item", agentItem, func() any { return new(ConversationItem) }},
		{"a conversation", `{"id":"conv_1","workspace_id":"ws_1","agent_id":"agt_1","agent_version":2,"status":"active","variables":` + exact + `,
			"messages":[` + item + `,` + agentItem + `],"usage":{"input_tokens":5,"output_tokens":1},"agent_turns":1,"disconnection_reason":null,"call_id":null,
			"created_at":"2026-11-21T10:00:00Z","updated_at":"2026-11-21T10:00:00Z","ended_at":null,"items":4,"started_by":"usr_1",
			"lease":{"token":"tok","until":"2026-11-21T10:05:00Z"}}`, func() any { return new(StoredConversation) }},
		{"a conversation as bbolt stores it", `{"id":"conv_1","variables":null,"messages":null}`, func() any { return new(StoredConversation) }},
	}
}

// TestConversationRowsMatchDecoder: each sample row decodes by its row types as the
// Decoder decodes it whole, numbers as written; into a set record, absent members keep
// what they held, present ones replace it (a tool call decoded into the one the item
// points at), null empties, as with json.Unmarshal; a row that is no JSON of its shape is
// refused.
func TestConversationRowsMatchDecoder(t *testing.T) {
	for _, c := range rowSamples() {
		switch c.into().(type) {
		case *ConversationItem:
			rowMatchesDecoder[ConversationItem](t, c.raw)
		case *StoredConversation:
			rowMatchesDecoder[StoredConversation](t, c.raw)
		default:
			t.Fatalf("%s: no check for %T", c.name, c.into())
		}
	}
	var it ConversationItem
	if err := DecodeJSON([]byte(rowSamples()[0].raw), &it); err != nil || it.ToolCall.Arguments.(map[string]any)["n"] != json.Number("12345678901234567890") {
		t.Errorf("a tool call's arguments: %v, %#v", err, it.ToolCall)
	}

	for _, raw := range []string{`{"role":"tool","tool_call":{"result":1.50},"knowledge":[{"score":1}]}`, `{"role":"user"}`, `{"tool_call":null}`} {
		call := &ToolCallItem{ID: "kept", Arguments: "kept"}
		set := ConversationItem{Content: "kept", ToolCall: call, Knowledge: []KnowledgeRef{{Text: "a"}, {Text: "b"}}}
		want := set
		want.ToolCall = &ToolCallItem{ID: "kept", Arguments: "kept"}
		want.Knowledge = slices.Clone(set.Knowledge)
		if err := DecodeJSON([]byte(raw), &set); err != nil {
			t.Fatal(err)
		}
		if err := decoderInto([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(set, want) || (set.ToolCall != nil) != (set.ToolCall == call) {
			t.Errorf("%s into a set item:\nrow     %#v %#v\nDecoder %#v %#v", raw, set, set.ToolCall, want, want.ToolCall)
		}
	}

	for _, bad := range []struct {
		raw  string
		into any
	}{
		{`{"tool_call":{"arguments":1} x`, &ConversationItem{}}, {`{"tool_call":[]}`, &ConversationItem{}}, {`{"tool_call":{"result":}}`, &ConversationItem{}},
		{`{"variables":[1]}`, &StoredConversation{}}, {`{"messages":{}}`, &StoredConversation{}}, {`{"messages":[1]}`, &StoredConversation{}},
		{`{} {}`, &StoredConversation{}},
	} {
		if err := DecodeJSON([]byte(bad.raw), bad.into); err == nil {
			t.Errorf("%T %s was taken", bad.into, bad.raw)
		}
	}
}

// decoderInto decodes b into v as DecodeJSON did before its row decoders.
func decoderInto(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// BenchmarkDecodeConversationItem: an agent's item calling a tool whose arguments and
// result hold numbers (storetest.ConversationWithToolCalls' shape), by DecodeJSON's row
// decoding and by the Decoder it replaced.
func BenchmarkDecodeConversationItem(b *testing.B) {
	raw := []byte(`{"role":"agent","content":"","tool_call":{"id":"call_3","name":"lookup_order","arguments":{"amount":19.90,"items":[1,2],"order_id":12345678901234567890},
	"result":{"eta_days":3,"status":"shipped","total":0.1000000000000000055511151231257827},"error":false},"knowledge":[],
	"latency_ms":{"first_token":240,"total":610},"usage":{"input_tokens":812,"output_tokens":31},"created_at":"2026-11-21T10:00:03.000Z"}`)
	b.Run("row", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var it ConversationItem
			if err := DecodeJSON(raw, &it); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var it ConversationItem
			if err := decoderInto(raw, &it); err != nil {
				b.Fatal(err)
			}
		}
	})
}
