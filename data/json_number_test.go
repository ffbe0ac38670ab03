package data_test

import (
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestSameJSON: generic JSON trees compare by meaning, numbers as exact decimals.
func TestSameJSON(t *testing.T) {
	tree := func(s string) any {
		var v any
		if err := data.DecodeJSON([]byte(s), &v); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return v
	}
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{`1`, `1.0`, true},
		{`1`, `1e0`, true},
		{`1.50`, `1.5`, true},
		{`150`, `1.5e2`, true},
		{`0.001`, `1E-3`, true},
		{`0`, `-0.0`, true},
		{`0`, `0e10`, true},
		{`-2`, `-2.000`, true},
		{`12345678901234567890`, `12345678901234567890`, true},
		{`12345678901234567890`, `12345678901234567891`, false},
		{`12345678901234567890`, `12345678901234567000`, false},
		{`0.1000000000000000055511151231257827`, `0.1`, false},
		{`1`, `-1`, false},
		{`1`, `10`, false},
		{`1`, `"1"`, false},
		{`true`, `1`, false},
		{`null`, `0`, false},
		{`{"a":[1,{"b":2.0}]}`, `{"a":[1.0,{"b":2}]}`, true},
		{`{"a":[1,{"b":2}]}`, `{"a":[1,{"b":3}]}`, false},
		{`{"a":1}`, `{"a":1,"b":null}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`[1]`, `[1,1]`, false},
		{`{"a":"x"}`, `{"a":"x"}`, true},
	} {
		if got := data.SameJSON(tree(c.a), tree(c.b)); got != c.same {
			t.Errorf("SameJSON(%s, %s) = %v, want %v", c.a, c.b, got, c.same)
		}
		if got := data.SameJSON(tree(c.b), tree(c.a)); got != c.same {
			t.Errorf("SameJSON(%s, %s) = %v, want %v", c.b, c.a, got, c.same)
		}
	}
	// A float64 was rounded by whatever decoded it: it never equals an exact number.
	if data.SameJSON(float64(1), json.Number("1")) || !data.SameJSON(float64(1), float64(1)) {
		t.Error("a float64 compares only with float64")
	}
}

// TestDecodeJSONKeepsNumbers: numbers in an any keep their text; anything after the
// value is refused, as json.Unmarshal refuses it.
func TestDecodeJSONKeepsNumbers(t *testing.T) {
	var v map[string]any
	if err := data.DecodeJSON([]byte(` {"n":12345678901234567890,"f":1.50,"e":1e400} `), &v); err != nil {
		t.Fatal(err)
	}
	if v["n"] != json.Number("12345678901234567890") || v["f"] != json.Number("1.50") || v["e"] != json.Number("1e400") {
		t.Errorf("decoded %#v", v)
	}
	// Deep inside a typed record, as storage decodes one.
	var rec struct {
		Call struct {
			Items []*struct{ Metadata map[string]any }
		}
		Event json.RawMessage
	}
	if err := data.DecodeJSON([]byte(`{"Call":{"Items":[{"Metadata":{"n":[12345678901234567890]}}]},"Event":{"x":1.50}}`), &rec); err != nil {
		t.Fatal(err)
	}
	if n := rec.Call.Items[0].Metadata["n"].([]any)[0]; n != json.Number("12345678901234567890") || string(rec.Event) != `{"x":1.50}` {
		t.Errorf("decoded %#v, %s", n, rec.Event)
	}
	for _, bad := range []string{`{} {}`, `{}x`, `{"a":1`, ``} {
		if err := data.DecodeJSON([]byte(bad), &v); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// TestNumbersFit: what a float64 holds, its exponent in at most 3 digits, at the edges.
func TestNumbersFit(t *testing.T) {
	for _, c := range []struct {
		n   string
		fit bool
	}{
		{"0", true}, {"-0.0e5", true}, {"12345678901234567890", true},
		{"1.7976931348623157e308", true}, {"1.8e308", false},
		{"5e-324", true}, {"2e-324", false}, {"1e-400", false},
		{"1e999", false}, {"1e0001", false}, {"1e001", true},
	} {
		if got := data.NumbersFit(map[string]any{"x": []any{json.Number(c.n)}}); got != c.fit {
			t.Errorf("NumbersFit(%s) = %v, want %v", c.n, got, c.fit)
		}
		if _, ok := data.NumberFloat(json.Number(c.n)); ok != c.fit {
			t.Errorf("NumberFloat(%s) ok = %v, want %v", c.n, ok, c.fit)
		}
	}
}
