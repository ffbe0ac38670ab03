package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestReadYAMLKeepsNumbers: every number of a state file keeps its text (a float64 would
// round 12345678901234567890123 and 0.1000000000000000055511151231257827); YAML's other
// number forms become the same number in JSON's form; booleans and nulls read as YAML 1.1
// had them in the former reader.
func TestReadYAMLKeepsNumbers(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"v: 12345678901234567890", `12345678901234567890`},
		{"v: 123456789012345678901234567890", `123456789012345678901234567890`},
		{"v: -98765432109876543210", `-98765432109876543210`},
		{"v: 0.1000000000000000055511151231257827", `0.1000000000000000055511151231257827`},
		{"v: 0.10", `0.10`},
		{"v: 1.0", `1.0`},
		{"v: 3.14159265358979323846264338327950288", `3.14159265358979323846264338327950288`},
		{"v: 1e3", `1e3`},
		{"v: 1.5E-7", `1.5E-7`},
		{"v: -2.5e+300", `-2.5e+300`},
		{"v: +7", `7`},
		{"v: -0", `-0`},
		{"v: .5", `0.5`},
		{"v: -.5e2", `-0.5e2`},
		{"v: 1.", `1`},
		{"v: 01.5", `1.5`},
		{"v: 1_000_000", `1000000`},
		{"v: 0x1F", `31`},
		{"v: -0x1F", `-31`},
		{"v: 0xFFFFFFFFFFFFFFFFFFFF", `1208925819614629174706175`},
		{"v: 0o17", `15`},
		{"v: 0b101", `5`},
		{"v: !!float 1", `1`},
		{"v: !!int 42", `42`},
		{"v: !!str 42", `"42"`},
		{`v: "12345678901234567890"`, `"12345678901234567890"`},
		{"v: '0.10'", `"0.10"`},
		{"v: 0", `0`},
		{"v: true", `true`},
		{"v: yes", `true`},
		{"v: On", `true`},
		{"v: n", `false`},
		{"v: off", `false`},
		{"v: ~", `null`},
		{"v: null", `null`},
		{"v:", `null`},
		{"v: 1:30", `"1:30"`},
		{"v: 2026-11-29", `"2026-11-29"`},
		{"v: +1 415 555", `"+1 415 555"`},
		{"v: 1.2.3", `"1.2.3"`},
		{"v: _1", `"_1"`},
		{"v: 0x", `"0x"`},
		{"v: [1, 2.50, {a: 99999999999999999999}]", `[1,2.50,{"a":99999999999999999999}]`},
		{"v:\n  deep:\n    - n: 0.30000000000000000000001", `{"deep":[{"n":0.30000000000000000000001}]}`},
		{"v: {yes: 1, 0x1F: 2, \"<<\": 3}", `{"0x1F":2,"\u003c\u003c":3,"yes":1}`},
		{"a: &x {n: 12345678901234567890, k: 1}\nv: {<<: *x, k: 2}", `{"k":2,"n":12345678901234567890}`},
		{"a: &x {k: 1}\nv: {k: 2, <<: *x}", `{"k":2}`},
		{"a: &x {k: 1}\nb: &y {k: 2, m: 3}\nv: {<<: [*x, *y]}", `{"k":1,"m":3}`},
		{"a: &x [1.10, 2]\nv: *x", `[1.10,2]`},
		{"v: 1\n---\n", `1`},
	}
	for _, c := range cases {
		tree, err := readYAML([]byte(c.yaml))
		if err != nil {
			t.Errorf("%q: %v", c.yaml, err)
			continue
		}
		got, _ := json.Marshal(tree.(map[string]any)["v"])
		if string(got) != c.want {
			t.Errorf("%q read as %s, want %s", c.yaml, got, c.want)
		}
	}
}

// TestReadYAMLRefuses: what has no JSON value, or would be read differently by YAML 1.1
// and 1.2, is refused naming the line.
func TestReadYAMLRefuses(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"a: 1\nv: .inf", "line 2: .inf is not a number JSON can hold"},
		{"v: -.Inf", "line 1: -.Inf is not a number"},
		{"v: .nan", "line 1: .nan is not a number"},
		{"v: !!float .nan", "line 1: .nan is not a number"},
		{"v: 017", "line 1: 017: an integer with a leading zero"},
		{"v: 08", "line 1: 08: an integer with a leading zero"},
		{"v: !!int 1.5", `line 1: "1.5" is not a int`},
		{"v: !!binary aGk=", "line 1: the tag !!binary is not supported"},
		{"v: !custom x", "line 1: the tag !custom is not supported"},
		{"v: 1\n\nv: 2", `line 3: the key "v" is already written on line 1`},
		{"v: 1\n---\nw: 2", "line 2: a second YAML document"},
		{"? [a]\n: 1", "line 1: a key must be a scalar"},
		{"v: {<<: 1}", "line 1: << takes a mapping or a list of mappings"},
		{"v: &a [*a]", "is inside its own anchor"},
		{"v: [", "yaml: line 1"},
	}
	for _, c := range cases {
		if _, err := readYAML([]byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.yaml, err, c.want)
		}
	}
}

// TestReadYAMLAliasBudget: aliases nested to expand into a billion values stop with an
// error instead of filling memory.
func TestReadYAMLAliasBudget(t *testing.T) {
	doc := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		doc += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = name
	}
	if _, err := readYAML([]byte(doc)); err == nil || !strings.Contains(err.Error(), "aliases expand into too many values") {
		t.Fatalf("billion laughs: %v", err)
	}
}

// TestWriteYAMLReadsBack: what pull writes reads back as the same tree, numbers with
// their text and strings that look like something else kept strings.
func TestWriteYAMLReadsBack(t *testing.T) {
	in := `{"n":[12345678901234567890123,0.10,1e3,-0,1.5E-7,0,-3],
		"s":["yes","no","on","y","~","null","","1e3","0x1F","017","1_000",".inf","12345678901234567890","<<","2026-11-29","- a","#x","a: b","line\nnext\n","tab\tand\nline"," lead","trail "],
		"m":{"<<":1,"yes":true,"":null,"0x1F":false}}`
	var tree any
	if err := data.DecodeJSON([]byte(in), &tree); err != nil {
		t.Fatal(err)
	}
	y, err := writeYAML(tree)
	if err != nil {
		t.Fatal(err)
	}
	back, err := readYAML(y)
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	want, _ := json.Marshal(tree)
	got, _ := json.Marshal(back)
	if string(got) != string(want) {
		t.Errorf("read back\n%s\nwant\n%s\nfrom\n%s", got, want, y)
	}
	if !strings.Contains(string(y), "- 12345678901234567890123\n") || !strings.Contains(string(y), "- 0.10\n") {
		t.Errorf("numbers are not written as their text:\n%s", y)
	}
}
