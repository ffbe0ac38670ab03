package conversation

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSubstitute checks {{variable}} substitution (conventions §23) on any text, with two
// given variables (a name of the input's and "b") of any value:
//   - values are written verbatim and never read again: substituting a marker for each
//     value and then the values for the markers gives the same text, so a value holding
//     "{{b}}" stays "{{b}}" (no second-order substitution);
//   - missing names exactly the references of the text no value was given for, once each,
//     in order of first use;
//   - with no variables the text comes back as it was, its references all missing;
//   - valid UTF-8 in gives valid UTF-8 out; unbalanced braces or broken bytes never panic;
//   - a text that is a JSON document is substituted inside its strings (checkSubstituteJSON).
func FuzzSubstitute(f *testing.F) {
	for _, c := range [][4]string{
		{"Hello {{name}}!", "name", "Ada", "B"},
		{"{{name}}{{name}}", "name", "{{b}}", "second order"},
		{"{{ name }} {{2x}} {{name {name}", "name", "Ada", ""},
		{"{{{name}}}", "name", "Ada", "x"},
		{"{{who}} {{b}} {{who}} {{nothing}}", "x", "", "{{who}}"},
		{"{{{{a}}}}", "a", "}}", "{{"},
		{"{{a}}}}{{b", "a", "{{", "b"},
		{"\xff{{a\xfe}}{{a}}", "a", "\xc3", "\x28"},
		{"", "", "", ""},
		{`{"type":"object","properties":{"order_id":{"type":"string","description":"Order of {{b}}"}}}`, "x", "", `", "injected": "`},
		{`{"{{b}}":{"type":"string"},"{{x}}":1}`, "x", "b", `a\b`},
		{`{"description":"{{b}}","maximum":12345678901234567890,"minimum":1.50,"enum":[1e2,-0]}`, "x", "", "Ada"},
		{`["{{b}}", "<b>&</b>", null, true]`, "x", "", "<i>"},
	} {
		f.Add(c[0], c[1], c[2], c[3])
	}
	f.Fuzz(func(t *testing.T, text, name, value, valueB string) {
		vars := map[string]any{name: value, "b": valueB}
		out, missing := Substitute(text, vars)

		var want []string
		for _, n := range VariablesIn(text) {
			if _, given := vars[n]; !given {
				want = append(want, n)
			}
		}
		if !slices.Equal(missing, want) {
			t.Fatalf("Substitute(%q) missing %q, want %q", text, missing, want)
		}

		// Markers no text or value contains stand in for the values.
		marker := func(i int) string { return "\x00" + strings.Repeat("\x01", i+1) + "\x00" }
		if !strings.Contains(text+value+valueB, "\x00") {
			marked, _ := Substitute(text, map[string]any{name: marker(0), "b": marker(1)})
			back := strings.NewReplacer(marker(0), value, marker(1), valueB).Replace(marked)
			if name == "b" {
				back = strings.NewReplacer(marker(1), valueB).Replace(marked)
			}
			if back != out {
				t.Fatalf("Substitute(%q) = %q, but with markers then values %q: a value was read again", text, out, back)
			}
		}

		if same, lacked := Substitute(text, nil); same != text || !slices.Equal(lacked, VariablesIn(text)) {
			t.Fatalf("Substitute(%q, nil) = %q, %q", text, same, lacked)
		}
		if utf8.ValidString(text) && utf8.ValidString(value) && utf8.ValidString(valueB) && !utf8.ValidString(out) {
			t.Fatalf("Substitute(%q) made invalid UTF-8 %q", text, out)
		}
		checkSubstituteJSON(t, text, vars)
	})
}

// checkSubstituteJSON checks substitution inside a JSON document (a custom function's
// parameters): a valid document comes back valid, and equal, member for member and number
// for number, to the document rewritten token by token with each of its strings (keys
// included) substituted as text and then decoded (so members whose keys become one keep
// the later's value, as a decoder keeps the later of two equal keys; invalid UTF-8 of a
// value written as U+FFFD, as JSON must); a value with quotes or backslashes cannot break
// out of its string.
func checkSubstituteJSON(t *testing.T, doc string, vars map[string]any) {
	if !json.Valid([]byte(doc)) {
		return
	}
	out, _ := substituteJSON(doc, vars)
	want, err := decodeNumbers(substitutedTokens(t, doc, vars))
	if err != nil {
		t.Fatalf("document %q, substituted token by token, does not decode: %v", doc, err)
	}
	got, err := decodeNumbers(out)
	if err != nil {
		t.Fatalf("substituteJSON(%q) = %q, not a document: %v", doc, out, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("substituteJSON(%q) = %q; want the document %v", doc, out, want)
	}
}

// substitutedTokens writes valid document doc again token by token, each string (keys
// included) substituted as text and encoded as JSON, equal keys left as they come.
func substitutedTokens(t *testing.T, doc string, vars map[string]any) string {
	d := json.NewDecoder(strings.NewReader(doc))
	d.UseNumber()
	var b strings.Builder
	type container struct {
		object bool
		tokens int // keys and values written so far
	}
	var open []container
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return b.String()
		}
		if err != nil {
			t.Fatalf("valid document %q: %v", doc, err)
		}
		if delim, ok := tok.(json.Delim); !ok || delim == '{' || delim == '[' {
			if n := len(open); n > 0 { // a separator before a key or a value
				c := &open[n-1]
				switch {
				case c.object && c.tokens%2 == 1:
					b.WriteByte(':')
				case c.tokens > 0:
					b.WriteByte(',')
				}
				c.tokens++
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			b.WriteRune(rune(v))
			if v == '{' || v == '[' {
				open = append(open, container{object: v == '{'})
			} else {
				open = open[:len(open)-1]
			}
		case string:
			s, _ := Substitute(v, vars)
			quoted, _ := json.Marshal(s)
			b.Write(quoted)
		case json.Number:
			b.WriteString(v.String())
		case bool:
			b.WriteString(strconv.FormatBool(v))
		case nil:
			b.WriteString("null")
		}
	}
}

// decodeNumbers decodes a document keeping each number's text.
func decodeNumbers(doc string) (any, error) {
	d := json.NewDecoder(bytes.NewReader([]byte(doc)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
