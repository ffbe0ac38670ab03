package redact

import (
	"encoding/json"
	"strconv"
)

// ApplyJSON redacts every string inside v, a value as encoding/json decodes it (maps,
// slices, strings, numbers, booleans, nil), and returns a new value; v is not modified.
// Object keys are kept as they are: they name fields, and changing them would change the
// shape the caller's tools read. A number is redacted through its decimal text (a card
// number may arrive as a JSON number): when that text changes, the value becomes the
// redacted string.
func (r *Redactor) ApplyJSON(v any) (any, Counts) {
	var counts Counts
	out := r.applyValue(v, &counts, 0)
	return out, counts
}

// maxJSONDepth bounds the recursion; encoding/json refuses deeper documents anyway.
const maxJSONDepth = 10000

func (r *Redactor) applyValue(v any, counts *Counts, depth int) any {
	if depth > maxJSONDepth {
		return v
	}
	switch x := v.(type) {
	case string:
		s, c := r.Apply(x)
		counts.merge(c)
		return s
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = r.applyValue(e, counts, depth+1)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = r.applyValue(e, counts, depth+1)
		}
		return s
	case json.Number:
		if s, c := r.Apply(string(x)); c != nil {
			counts.merge(c)
			return s
		}
		return x
	case float64:
		text := strconv.FormatFloat(x, 'f', -1, 64)
		if s, c := r.Apply(text); c != nil {
			counts.merge(c)
			return s
		}
		return x
	}
	return v
}

func (c *Counts) merge(o Counts) {
	for k, v := range o {
		c.add(k, v)
	}
}
