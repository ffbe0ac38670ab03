package data

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
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
	})
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
