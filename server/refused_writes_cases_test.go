package server_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The bad values of a request schema's properties, derived from the OpenAPI document
// alone: one past each bound, a wrong JSON type, null where null is not allowed, a value
// outside an enum, a malformed formatted string.

// badValue is a value of a property that its schema refuses, and what makes it bad.
type badValue struct {
	kind  string
	value any
}

// schemaDoc resolves the document's $refs.
type schemaDoc struct{ schemas map[string]any }

// resolve follows s's $ref, and a oneOf or anyOf's single branch that is not null.
func (d schemaDoc) resolve(s map[string]any) map[string]any {
	for range 8 {
		if ref, ok := s["$ref"].(string); ok {
			s, _ = d.schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
			continue
		}
		var branches []map[string]any
		for _, k := range []string{"oneOf", "anyOf"} {
			for _, b := range asList(s[k]) {
				if bm, _ := b.(map[string]any); bm != nil && bm["type"] != "null" {
					branches = append(branches, bm)
				}
			}
		}
		if len(branches) != 1 {
			return s
		}
		s = branches[0]
	}
	return s
}

// types are the JSON types s admits ("integer" admitting what "number" does not), none
// when it says nothing of them.
func (d schemaDoc) types(s map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, t := range append(asList(s["type"]), s["type"]) {
		if name, ok := t.(string); ok {
			out[name] = true
		}
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		for _, b := range asList(s[k]) {
			bm, _ := b.(map[string]any)
			if bm == nil {
				continue
			}
			if bm["$ref"] != nil {
				bm = d.resolve(bm)
			}
			sub := d.types(bm)
			if len(sub) == 0 {
				return map[string]bool{} // a branch of any type: no type is wrong
			}
			maps.Copy(out, sub)
		}
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

// badValues lists the values s refuses.
func (d schemaDoc) badValues(raw map[string]any) []badValue {
	if raw["readOnly"] == true {
		// A record's member the body may not give: any value is refused.
		return []badValue{{"read-only", "a value"}}
	}
	types := d.types(raw)
	s := d.resolve(raw)
	var out []badValue
	if len(types) > 0 {
		for _, c := range []struct {
			value any
			types []string
		}{{"a string", []string{"string"}}, {7, []string{"integer", "number"}}, {true, []string{"boolean"}}, {[]any{}, []string{"array"}}, {map[string]any{}, []string{"object"}}} {
			if !slices.ContainsFunc(c.types, func(t string) bool { return types[t] }) {
				out = append(out, badValue{"wrong type", c.value})
				break
			}
		}
		if !types["null"] {
			out = append(out, badValue{"null", nil})
		}
	}
	out = append(out, stringBadValues(s)...)
	step := 1.0
	if !types["integer"] {
		step = 0.01
	}
	if hi, ok := s["maximum"].(float64); ok {
		out = append(out, badValue{"maximum+1", hi + step})
	}
	if lo, ok := s["minimum"].(float64); ok {
		out = append(out, badValue{"minimum-1", lo - step})
	}
	return append(out, d.arrayBadValues(s)...)
}

// stringBadValues: one character past maxLength, one short of minLength, outside the
// enum, not of the format.
func stringBadValues(s map[string]any) []badValue {
	var out []badValue
	if n, ok := s["maxLength"].(float64); ok {
		out = append(out, badValue{"maxLength+1", longString(s, int(n)+1)})
	}
	if n, ok := s["minLength"].(float64); ok && n > 0 {
		out = append(out, badValue{"minLength-1", strings.Repeat("a", int(n)-1)})
	}
	if enum := asList(s["enum"]); len(enum) > 0 {
		if _, isString := enum[0].(string); isString {
			out = append(out, badValue{"outside enum", "not-one-of-them"})
		}
	}
	switch s["format"] {
	case "date-time", "date":
		out = append(out, badValue{"bad format", "not a date"})
	case "email":
		out = append(out, badValue{"bad format", "not an email"})
	case "uri":
		out = append(out, badValue{"bad format", "not a url"})
	}
	return out
}

// longString is n characters that are otherwise of s's format.
func longString(s map[string]any, n int) string {
	prefix := ""
	switch s["format"] {
	case "uri":
		prefix = "https://example.com/"
	case "email":
		return strings.Repeat("a", n-len("@example.com")) + "@example.com"
	}
	return prefix + strings.Repeat("a", max(n-len(prefix), 0))
}

// maxBadItems bounds the arrays made one past maxItems: the body limit refuses longer
// ones anyway (413), and the test's time is better spent elsewhere.
const maxBadItems = 20000

// arrayBadValues: one item past maxItems, one short of minItems, an item outside the
// items' enum.
func (d schemaDoc) arrayBadValues(s map[string]any) []badValue {
	items, _ := s["items"].(map[string]any)
	if items == nil {
		return nil
	}
	items = d.resolve(items)
	var out []badValue
	if n, ok := s["maxItems"].(float64); ok && n < maxBadItems {
		out = append(out, badValue{"maxItems+1", d.itemsOf(items, int(n)+1)})
	}
	if n, ok := s["minItems"].(float64); ok && n > 0 {
		out = append(out, badValue{"minItems-1", d.itemsOf(items, int(n)-1)})
	}
	if enum := asList(items["enum"]); len(enum) > 0 {
		out = append(out, badValue{"item outside enum", []any{"not-one-of-them"}})
	}
	return out
}

// itemsOf makes n distinct items of the items' schema (distinct, as a list may have to
// be unique; whether each is valid besides does not matter past the bound).
func (d schemaDoc) itemsOf(items map[string]any, n int) []any {
	out := make([]any, n)
	enum := asList(items["enum"])
	for i := range out {
		switch {
		case len(enum) > 0:
			out[i] = enum[i%len(enum)]
		case d.types(items)["object"]:
			out[i] = map[string]any{}
		case d.types(items)["integer"], d.types(items)["number"]:
			out[i] = i
		default:
			out[i] = fmt.Sprintf("item-%d", i)
		}
	}
	return out
}

// objectProps are the properties of an object schema, none for another.
func (d schemaDoc) objectProps(raw map[string]any) map[string]any {
	props, _ := d.resolve(raw)["properties"].(map[string]any)
	return props
}

// propertyCase is a body with one property made bad, and the path of the property.
type propertyCase struct {
	path string
	bad  badValue
	body map[string]any
}

// badOf lists the bad values of a property, by its name and schema.
type badOf func(name string, p map[string]any) []badValue

// propertyCases applies every bad value of every property of schema to body: the top
// level's, the members' of an object property, and those of the first item of an
// array of objects when body has one; then leaves out each required member.
func (d schemaDoc) propertyCases(schema map[string]any, body map[string]any) []propertyCase {
	out := d.eachProperty(schema, body, func(_ string, p map[string]any) []badValue { return d.badValues(p) })
	for _, name := range requiredOf(d.resolve(schema)) {
		if _, ok := body[name]; ok {
			trimmed := maps.Clone(body)
			delete(trimmed, name)
			out = append(out, propertyCase{name, badValue{"required missing", nil}, trimmed})
		}
	}
	return out
}

func requiredOf(s map[string]any) []string {
	var out []string
	for _, r := range asList(s["required"]) {
		out = append(out, r.(string))
	}
	return out
}

// with is a copy of m (nil: empty) with member name set to v.
func with(m map[string]any, name string, v any) map[string]any {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]any{}
	}
	out[name] = v
	return out
}
