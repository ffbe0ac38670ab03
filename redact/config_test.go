package redact

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func rules(n int) []Rule {
	out := make([]Rule, n)
	for i := range out {
		out[i] = Rule{Name: fmt.Sprintf("r%d", i), Pattern: "x"}
	}
	return out
}

// TestValidate checks every rule of a setting at its bound and just past it; each case
// lists every fault expected, with its path.
func TestValidate(t *testing.T) {
	cases := append(configSizeCases(), configPatternAndNameCases()...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkConfigCase(t, c) })
	}
	if f := (Config{Detectors: []string{"x"}}).Validate(""); len(f) != 1 || f[0].Path != "detectors.0" {
		t.Errorf("top-level path: %v", f)
	}
}

// configCase is a setting and the faults Validate finds in it.
type configCase struct {
	name   string
	cfg    Config
	faults map[string]string // path -> part of the message
}

// configSizeCases are the cases of the detectors, the number of rules and the size of
// their patterns and programs.
func configSizeCases() []configCase {
	return []configCase{
		{"empty", Config{}, nil},
		{"all detectors", Config{Detectors: Detectors}, nil},
		{"unknown detector", Config{Detectors: []string{"card", "passport"}},
			map[string]string{"redaction.detectors.1": "must be one of: card, email, phone, iban, ssn"}},
		{"duplicate detector", Config{Detectors: []string{"card", "card"}},
			map[string]string{"redaction.detectors.1": "duplicate"}},
		{"20 rules", Config{Rules: rules(MaxRules)}, nil},
		{"21 rules", Config{Rules: rules(MaxRules + 1)},
			map[string]string{"redaction.rules": "must not have more than 20 items"}},
		{"pattern of 1000 bytes", Config{Rules: []Rule{{"r", "[" + strings.Repeat("a", 998) + "]"}}}, nil},
		{"pattern of 1001 bytes", Config{Rules: []Rule{{"r", strings.Repeat("ab", 500) + "c"}}},
			map[string]string{"redaction.rules.0.pattern": "must not be greater than 1000 bytes"}},
		// a{n} compiles to n+2 instructions: a{498} to exactly MaxProgramSize, a{499} to
		// one more. A setting stored when a pattern could compile to 1000 still compiles
		// (New accepts it; MaxWork bounds each call instead).
		{"program at the limit", Config{Rules: []Rule{{"r", "a{498}"}}}, nil},
		{"program too large", Config{Rules: []Rule{{"r", "a{499}"}}},
			map[string]string{"redaction.rules.0.pattern": "at most 500 instructions"}},
		{"program as stored before", Config{Rules: []Rule{{"r", "a{998}"}}},
			map[string]string{"redaction.rules.0.pattern": "at most 500 instructions"}},
		{"rules at the setting's limit", Config{Rules: []Rule{{"a", "a{98}"}, {"b", "a{98}"}, {"c", "a{98}"}, {"d", "a{98}"}, {"e", "a{98}"}}}, nil},
		{"rules past the setting's limit", Config{Rules: []Rule{{"a", "a{98}"}, {"b", "a{98}"}, {"c", "a{98}"}, {"d", "a{98}"}, {"e", "a{99}"}}},
			map[string]string{"redaction.rules": "at most 500 instructions together (they compile to 501)"}},
		{"short pattern, large program", Config{Rules: []Rule{{"r", "[a-z0-9]{5,999}"}}}, // 1,995 instructions
			map[string]string{"redaction.rules.0.pattern": "at most 500 instructions"}},
	}
}

// configPatternAndNameCases are the cases of the patterns' syntax and the rules' names.
func configPatternAndNameCases() []configCase {
	name32 := "a" + strings.Repeat("b", 31)
	return []configCase{
		{"invalid regexp", Config{Rules: []Rule{{"r", "(ab"}}},
			map[string]string{"redaction.rules.0.pattern": "must be a valid RE2 regular expression: a ( has no closing )."}},
		{"perl lookahead", Config{Rules: []Rule{{"r", "a(?=b)"}}},
			map[string]string{"redaction.rules.0.pattern": "must be a valid RE2 regular expression"}},
		{"matches empty", Config{Rules: []Rule{{"r", "a*"}}},
			map[string]string{"redaction.rules.0.pattern": "must not match the empty string"}},
		{"missing fields", Config{Rules: []Rule{{}}},
			map[string]string{"redaction.rules.0.name": "is required", "redaction.rules.0.pattern": "is required"}},
		{"name of 32", Config{Rules: []Rule{{name32, "x"}}}, nil},
		{"name of 33", Config{Rules: []Rule{{name32 + "c", "x"}}},
			map[string]string{"redaction.rules.0.name": "format is invalid"}},
		{"name upper case", Config{Rules: []Rule{{"Order", "x"}}},
			map[string]string{"redaction.rules.0.name": "format is invalid"}},
		{"name starts with digit", Config{Rules: []Rule{{"1a", "x"}}},
			map[string]string{"redaction.rules.0.name": "format is invalid"}},
		{"name of a detector", Config{Rules: []Rule{{"card", "x"}}},
			map[string]string{"redaction.rules.0.name": "built-in detector"}},
		{"duplicate name", Config{Rules: []Rule{{"a", "x"}, {"a", "y"}}},
			map[string]string{"redaction.rules.1.name": "duplicate"}},
		{"every fault at once", Config{Detectors: []string{"nope"}, Rules: []Rule{{"ok", "x"}, {"Bad", "("}}},
			map[string]string{"redaction.detectors.0": "invalid", "redaction.rules.1.name": "format",
				"redaction.rules.1.pattern": "valid RE2"}},
	}
}

// checkConfigCase checks c's faults, each naming its path, and that New accepts c when
// it is valid or only what Merge produces.
func checkConfigCase(t *testing.T, c configCase) {
	t.Helper()
	got := map[string]string{}
	for _, f := range c.cfg.Validate("redaction") {
		if _, dup := got[f.Path]; dup {
			t.Errorf("two faults for %s", f.Path)
		}
		got[f.Path] = f.Message
		if !strings.Contains(f.Message, "The "+f.Path+" field") && !strings.Contains(f.Message, "The selected "+f.Path) {
			t.Errorf("message %q does not name %s", f.Message, f.Path)
		}
	}
	if len(got) != len(c.faults) {
		t.Fatalf("faults %v, want paths of %v", got, c.faults)
	}
	for p, want := range c.faults {
		if !strings.Contains(got[p], want) {
			t.Errorf("%s: %q does not contain %q", p, got[p], want)
		}
	}
	// New accepts what Merge produces: more rules, repeated names and detectors.
	_, overTotal := c.faults["redaction.rules"]
	lenient := c.name == "21 rules" || strings.HasPrefix(c.name, "duplicate") || c.name == "program as stored before" || c.name == "program too large" ||
		overTotal && len(c.faults) == 1
	if _, err := New(c.cfg); (err == nil) != (len(c.faults) == 0 || lenient) {
		t.Errorf("New: %v, Validate: %v", err, got)
	}
}

func TestMerge(t *testing.T) {
	ws := Config{Detectors: []string{Card, Email}, Rules: []Rule{{"order_id", `ORD-\d+`}}}
	agent := Config{Detectors: []string{Email, Phone}, Rules: []Rule{{"order_id", `ORDER\d+`}, {"badge", `B-\d{4}`}}}
	m := Merge(ws, agent)
	if !reflect.DeepEqual(m.Detectors, []string{Card, Email, Phone}) {
		t.Errorf("detectors %v", m.Detectors)
	}
	if len(m.Rules) != 3 || m.Rules[0].Pattern != `ORD-\d+` || m.Rules[1].Pattern != `ORDER\d+` {
		t.Errorf("rules %v", m.Rules)
	}
	// An agent with nothing turns nothing off.
	if got := Merge(ws, Config{}); !reflect.DeepEqual(got.Detectors, ws.Detectors) || len(got.Rules) != 1 {
		t.Errorf("merge with empty agent: %+v", got)
	}
	r, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	out, c := r.Apply("ORD-12 ORDER34 B-1234 4111111111111111 415-555-0123")
	if out != "[order_id] [order_id] [badge] [card] [phone]" || c["order_id"] != 2 || c["badge"] != 1 {
		t.Fatalf("got %q %v", out, c)
	}
	// Two settings of 20 rules each compile; 41 rules do not.
	if _, err := New(Merge(Config{Rules: rules(MaxRules)}, Config{Rules: rules(MaxRules)})); err != nil {
		t.Errorf("40 merged rules: %v", err)
	}
	if _, err := New(Config{Rules: rules(2*MaxRules + 1)}); err == nil {
		t.Error("41 rules compiled")
	}
	if _, err := New(Config{Detectors: []string{"nope"}}); err == nil {
		t.Error("unknown detector compiled")
	}
}

func TestCustomRules(t *testing.T) {
	r, err := New(Config{Detectors: []string{Card}, Rules: []Rule{
		{"member", `M-\d{6}`},
		{"word", `card|member|\]`}, // tries to rewrite markers: it must not
	}})
	if err != nil {
		t.Fatal(err)
	}
	in := "member M-123456 paid with 4111111111111111, card ok"
	want := "[word] [member] paid with [card], [word] ok"
	out, c := r.Apply(in)
	if out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
	if c["member"] != 1 || c["word"] != 2 || c[Card] != 1 {
		t.Errorf("counts %v", c)
	}
	if again, _ := r.Apply(out); again != out {
		t.Errorf("second pass %q", again)
	}
}

func TestApplyJSON(t *testing.T) {
	r, err := New(Config{Detectors: Detectors})
	if err != nil {
		t.Fatal(err)
	}
	var v any
	doc := `{"a@b.io": "mail a@b.io", "n": [1, "call 415-555-0123", {"deep": "4111 1111 1111 1111"}],
		"card_num": 4111111111111111, "ok": true, "none": null, "price": 12.5}`
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	before, _ := json.Marshal(v)
	out, c := r.ApplyJSON(v)
	got, _ := json.Marshal(out)
	want := `{"a@b.io":"mail [email]","card_num":"[card]","n":[1,"call [phone]",{"deep":"[card]"}],"none":null,"ok":true,"price":12.5}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if c[Email] != 1 || c[Phone] != 1 || c[Card] != 2 {
		t.Errorf("counts %v", c)
	}
	if after, _ := json.Marshal(v); string(after) != string(before) {
		t.Errorf("input modified: %s", after)
	}
	// json.Number as decoded with UseNumber.
	dec := json.NewDecoder(strings.NewReader(`{"x": 4111111111111111, "y": 42}`))
	dec.UseNumber()
	var n any
	if err := dec.Decode(&n); err != nil {
		t.Fatal(err)
	}
	out, _ = r.ApplyJSON(n)
	if got, _ := json.Marshal(out); string(got) != `{"x":"[card]","y":42}` {
		t.Errorf("numbers: %s", got)
	}
}

// TestConcurrentApply shares one Redactor between goroutines (run with -race): it keeps
// no state between calls but its pools.
func TestConcurrentApply(t *testing.T) {
	r, err := New(Config{Detectors: Detectors, Rules: []Rule{{"order_id", `ORD-\d+`}}})
	if err != nil {
		t.Fatal(err)
	}
	in := "card 4111 1111 1111 1111, a@b.io, ORD-12, john dot smith at example dot com"
	want, _ := r.Apply(in)
	done := make(chan string)
	for range 8 {
		go func() {
			out := ""
			for range 50 {
				out, _ = r.Apply(in)
			}
			done <- out
		}()
	}
	for range 8 {
		if got := <-done; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

// TestConfigJSON: the shape a workspace or agent `redaction` setting has on the wire.
func TestConfigJSON(t *testing.T) {
	var c Config
	in := `{"detectors":["card","phone"],"rules":[{"name":"order_id","pattern":"ORD-[0-9]{6}"}]}`
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Detectors) != 2 || c.Rules[0].Name != "order_id" || c.Rules[0].Pattern != "ORD-[0-9]{6}" {
		t.Fatalf("decoded %+v", c)
	}
	out, _ := json.Marshal(c)
	if string(out) != in {
		t.Errorf("encoded %s", out)
	}
}

// Work is the text's bytes times the rules' instructions, merged rules included; the
// built-in detectors and a nil redactor cost nothing in its unit.
func TestWork(t *testing.T) {
	var none *Redactor
	if none.Work(1<<20) != 0 {
		t.Error("a nil redactor works")
	}
	builtins, _ := New(Config{Detectors: Detectors})
	if builtins.Work(1<<20) != 0 {
		t.Error("the built-in detectors count as rules' work")
	}
	ws := Config{Rules: []Rule{{"a", "a{98}"}, {"b", "b{48}"}}} // 100 + 50 instructions
	agent := Config{Rules: []Rule{{"a", "c{8}"}}}               // 10, under a repeated name
	r, err := New(Merge(ws, agent))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Work(1000); got != 160_000 {
		t.Errorf("Work(1000) = %d, want 160000", got)
	}
}
