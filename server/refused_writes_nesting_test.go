package server_test

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// The bad values of a request schema at every level of its nesting: the members of an
// object in an object, the items of a list (and of a list in a list), the values and keys
// of a map (additionalProperties, propertyNames), each on a body the route would
// otherwise take.

// maxNesting bounds how many objects, lists and maps deep the bad values reach below the
// body. The document's deepest rule is ten levels down (an import's agents.N.versions.N.
// llm_config.tools.N.phone_directory.N.transfer_type), so it reaches every one; the bound
// keeps a schema that would nest itself finite.
const maxNesting = 10

// nestedCase is a value with one thing inside it made bad, and the dot path of that
// thing below the value ("" for the value's own key).
type nestedCase struct {
	path  string
	bad   badValue
	value any
}

// joinPath is the dot path of rest below name.
func joinPath(name, rest string) string {
	if rest == "" {
		return name
	}
	return name + "." + rest
}

// eachProperty applies bad's values of each member of schema to body, and of everything
// nested in the members (nestedCases).
func (d schemaDoc) eachProperty(schema map[string]any, body map[string]any, bad badOf) []propertyCase {
	var out []propertyCase
	for _, c := range d.memberCases(d.objectProps(schema), body, bad, 0) {
		out = append(out, propertyCase{c.path, c.bad, c.value.(map[string]any)})
	}
	return out
}

// memberCases are, on obj, each member of props made bad, and each thing nested in a
// member made bad.
func (d schemaDoc) memberCases(props map[string]any, obj map[string]any, bad badOf, depth int) []nestedCase {
	var out []nestedCase
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p, _ := props[name].(map[string]any)
		for _, b := range bad(name, p) {
			out = append(out, nestedCase{name, b, with(obj, name, b.value)})
		}
		for _, c := range d.nestedCases(p, obj[name], bad, depth+1) {
			out = append(out, nestedCase{joinPath(name, c.path), c.bad, with(obj, name, c.value)})
		}
	}
	return out
}

// nestedCases are the cases inside a value v of schema p: its members when p is an
// object (on v, or on an object of its own when v is none), its first item when a list
// (v's first, or a new one), a value of a map and a key of one.
func (d schemaDoc) nestedCases(p map[string]any, v any, bad badOf, depth int) []nestedCase {
	if depth > maxNesting || p == nil {
		return nil
	}
	s := d.resolve(p)
	var out []nestedCase
	if props, _ := s["properties"].(map[string]any); props != nil {
		inner, _ := v.(map[string]any)
		if inner == nil {
			inner, _ = d.seed(p, depth).(map[string]any)
		}
		out = append(out, d.memberCases(props, inner, bad, depth)...)
	}
	if items, _ := s["items"].(map[string]any); items != nil {
		out = append(out, d.itemCases(items, asList(v), bad, depth)...)
	}
	if values, _ := s["additionalProperties"].(map[string]any); len(values) > 0 {
		out = append(out, d.mapValueCases(values, v, bad, depth)...)
	}
	if names, _ := s["propertyNames"].(map[string]any); names != nil {
		out = append(out, mapKeyCases(names, v)...)
	}
	return out
}

// itemCases are list's first item (a new one when list is empty) made bad, and each
// thing nested in it made bad; the other items stay as they are.
func (d schemaDoc) itemCases(items map[string]any, list []any, bad badOf, depth int) []nestedCase {
	var first any
	rest := []any{}
	if len(list) > 0 {
		first, rest = list[0], list[1:]
	}
	in := func(item any) []any { return append([]any{item}, rest...) }
	var out []nestedCase
	for _, b := range d.badValues(items) {
		out = append(out, nestedCase{"0", b, in(b.value)})
	}
	for _, c := range d.nestedCases(items, first, bad, depth+1) {
		out = append(out, nestedCase{joinPath("0", c.path), c.bad, in(c.value)})
	}
	return out
}

// mapValueCases are a map's value made bad under a key of its own (the map's first key
// when it has one, so the rest of that value stays valid), and each thing nested in it.
func (d schemaDoc) mapValueCases(values map[string]any, v any, bad badOf, depth int) []nestedCase {
	m, _ := v.(map[string]any)
	key := "zz_key"
	if len(m) > 0 {
		key = slices.Sorted(maps.Keys(m))[0]
	}
	var out []nestedCase
	for _, b := range d.badValues(values) {
		out = append(out, nestedCase{key, b, with(m, key, b.value)})
	}
	for _, c := range d.nestedCases(values, m[key], bad, depth+1) {
		out = append(out, nestedCase{joinPath(key, c.path), c.bad, with(m, key, c.value)})
	}
	return out
}

// mapKeyCases are a map with a key its propertyNames refuse (one past maxLength, not of
// the pattern), holding a string; the error names the map, or the key below it.
func mapKeyCases(names map[string]any, v any) []nestedCase {
	m, _ := v.(map[string]any)
	var out []nestedCase
	if n, ok := names["maxLength"].(float64); ok {
		out = append(out, nestedCase{"", badValue{"key maxLength+1", nil}, with(m, strings.Repeat("k", int(n)+1), "v")})
	}
	if _, ok := names["pattern"].(string); ok {
		out = append(out, nestedCase{"", badValue{"key outside pattern", nil}, with(m, "not a key!", "v")})
	}
	return out
}

// seed is a value of schema p that its own rules take, for a case nested in a value the
// valid body does not hold: an object with each required member seeded, a list of the
// fewest items, the first of an enum, a string of the format. A rule across members (a
// provider's model, a choice list allowed only for one type) may still refuse it; the
// 422 then names the bad value or what holds it (checkRefusal).
func (d schemaDoc) seed(p map[string]any, depth int) any {
	s := d.resolve(p)
	types := d.types(p)
	if enum := asList(s["enum"]); len(enum) > 0 {
		return enum[0]
	}
	switch {
	case s["properties"] != nil && depth <= maxNesting:
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for _, name := range requiredOf(s) {
			sub, _ := props[name].(map[string]any)
			out[name] = d.seed(sub, depth+1)
		}
		return out
	case types["object"]:
		return map[string]any{}
	case types["array"]:
		items, _ := s["items"].(map[string]any)
		n, _ := s["minItems"].(float64)
		out := []any{}
		if items == nil || n == 0 {
			return out
		}
		if items = d.resolve(items); items["properties"] == nil {
			return d.itemsOf(items, int(n)) // distinct, as a list may have to be
		}
		for range int(n) {
			out = append(out, d.seed(items, depth+1))
		}
		return out
	case types["integer"], types["number"]:
		if lo, ok := s["minimum"].(float64); ok {
			return lo
		}
		return 1
	case types["boolean"]:
		return false
	}
	return seedString(s)
}

// seedString is a string of s's format, or the first of a few that its pattern takes,
// or of its least length.
func seedString(s map[string]any) string {
	switch s["format"] {
	case "date-time":
		return "2026-01-15T09:30:00Z"
	case "date":
		return "2026-01-15"
	case "email":
		return "seed@example.com"
	case "uri":
		return "https://example.com/seed"
	}
	n, _ := s["minLength"].(float64)
	plain := strings.Repeat("a", max(int(n), 1))
	if pattern, ok := s["pattern"].(string); ok {
		re, err := regexp.Compile(pattern)
		for _, c := range []string{plain, "1", "+14155550142", "09:00", "seed-1"} {
			if err == nil && re.MatchString(c) {
				return c
			}
		}
	}
	return plain
}
