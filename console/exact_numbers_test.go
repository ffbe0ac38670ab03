package console

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestFloatsWhereExact: a reply's numbers are float64 where a float64 writes them back as
// the API wrote them (what every page's arithmetic reads), json.Number elsewhere, and
// str shows those as written.
func TestFloatsWhereExact(t *testing.T) {
	for _, c := range []struct {
		in   string
		want any
		text string
	}{
		{"3", 3.0, "3"},
		{"-17", -17.0, "-17"},
		{"0.5", 0.5, "0.5"},
		{"3600000", 3600000.0, "3600000"},
		{"1e+21", 1e21, "1000000000000000000000"},
		{"12345678901234567890", json.Number("12345678901234567890"), "12345678901234567890"},
		{"0.10", json.Number("0.10"), "0.10"},
		{"1.0", json.Number("1.0"), "1.0"},
		{"1e3", json.Number("1e3"), "1e3"},
		{"0.1000000000000000055511151231257827", json.Number("0.1000000000000000055511151231257827"), "0.1000000000000000055511151231257827"},
	} {
		tree := map[string]any{"a": []any{json.Number(c.in)}}
		floatsWhereExact(tree)
		got := tree["a"].([]any)[0]
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s became %#v, want %#v", c.in, got, c.want)
		}
		if s := str(got); s != c.text {
			t.Errorf("%s shows as %q, want %q", c.in, s, c.text)
		}
	}
}

// TestFormsKeepNumbers: the test editor's variables and criteria, and a number's
// variables, send a number as written (they went through a float64: 12345678901234567000).
func TestFormsKeepNumbers(t *testing.T) {
	if got := scalar("12345678901234567890"); got != json.Number("12345678901234567890") {
		t.Errorf("scalar: %#v", got)
	}
	for in, want := range map[string]any{"0.10": json.Number("0.10"), "true": true, "+14155550100": "+14155550100", "Inf": "Inf", "text": "text"} {
		if got := scalar(in); got != want {
			t.Errorf("scalar(%q) = %#v, want %#v", in, got, want)
		}
	}
	obj, _ := formObject(`{"ref": 12345678901234567890, "rate": 0.10}`).(map[string]any)
	if obj["ref"] != json.Number("12345678901234567890") || obj["rate"] != json.Number("0.10") {
		t.Errorf("formObject: %#v", obj)
	}
	faults := map[string][]string{}
	crit := criteriaOfForm([]criterionRow{{Type: "tool_called", Name: "book", Arguments: `{"order": 12345678901234567890}`}}, faults)
	args := crit[0].(map[string]any)["arguments"].(map[string]any)
	if len(faults) > 0 || args["order"] != json.Number("12345678901234567890") {
		t.Errorf("criteria arguments: %#v %v", args, faults)
	}
}
