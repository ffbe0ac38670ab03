package data

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Change is one changed leaf of an agent's configuration between two snapshots
// (conventions §17 "Version diff"). Old is null for an added field or item, New for a
// removed one.
type Change struct {
	Path string `json:"path"`
	Old  any    `json:"old"`
	New  any    `json:"new"`
}

// secretPaths are the dot paths whose values a diff shows only masked.
var secretPaths = map[string]bool{"llm_config.api_key": true}

// DiffAgentConfig lists the fields that differ from a to b, as dot paths in the wire
// format (array items by index: llm_config.tools.0.name), sorted by path with indexes in
// numeric order. An item or member present on one side only is one change holding the
// whole value. Credentials are masked.
//
// It lives in data, not validate, because it judges nothing: it compares two records, and
// both storage (versions) and HTTP (the diff route) call it.
func DiffAgentConfig(a, b AgentSnapshot) []Change {
	changes := []Change{}
	diffValue("", toTree(a), toTree(b), &changes)
	slices.SortFunc(changes, func(x, y Change) int { return comparePaths(x.Path, y.Path) })
	return changes
}

// toTree turns a snapshot into the generic JSON tree it is on the wire; numbers stay
// json.Number, so 60000 is shown as 60000 and compares exactly.
func toTree(s AgentSnapshot) any {
	b, err := json.Marshal(s)
	if err != nil {
		panic("voiceapi: encoding a snapshot: " + err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		panic("voiceapi: decoding a snapshot: " + err.Error())
	}
	return v
}

type absent struct{} // a member or item missing on one side, shown as null

func diffValue(path string, a, b any, out *[]Change) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			keys := map[string]bool{}
			for k := range av {
				keys[k] = true
			}
			for k := range bv {
				keys[k] = true
			}
			for k := range keys {
				diffValue(join(path, k), get(av, k), get(bv, k), out)
			}
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			for i := range max(len(av), len(bv)) {
				diffValue(join(path, strconv.Itoa(i)), at(av, i), at(bv, i), out)
			}
			return
		}
	}
	if equalJSON(a, b) {
		return
	}
	*out = append(*out, Change{Path: path, Old: shown(path, a), New: shown(path, b)})
}

func get(m map[string]any, k string) any {
	if v, ok := m[k]; ok {
		return v
	}
	return absent{}
}

func at(s []any, i int) any {
	if i < len(s) {
		return s[i]
	}
	return absent{}
}

// shown is a value as a change reports it: absent as null, secrets masked.
func shown(path string, v any) any {
	if _, ok := v.(absent); ok {
		return nil
	}
	if s, ok := v.(string); ok && secretPaths[path] {
		return MaskSecret(s)
	}
	return maskHeaderTree(path, v)
}

// maskHeaderTree returns v, the value at path, with every custom function header in it
// masked (MaskHeader): an item that changed, or a list or tool added or removed whole.
func maskHeaderTree(path string, v any) any {
	switch t := v.(type) {
	case string:
		if isHeaderItemPath(path) {
			return MaskHeader(t)
		}
	case []any:
		out := make([]any, len(t))
		for i, item := range t {
			out[i] = maskHeaderTree(join(path, strconv.Itoa(i)), item)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, item := range t {
			out[k] = maskHeaderTree(join(path, k), item)
		}
		return out
	}
	return v
}

// isHeaderItemPath reports whether path is llm_config.tools.N.custom_function_headers.M.
func isHeaderItemPath(path string) bool {
	s := strings.Split(path, ".")
	return len(s) == 5 && s[0] == "llm_config" && s[1] == "tools" && s[3] == "custom_function_headers"
}

func equalJSON(a, b any) bool {
	_, aAbsent := a.(absent)
	_, bAbsent := b.(absent)
	if aAbsent || bAbsent {
		return aAbsent == bAbsent
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func join(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

// comparePaths orders dot paths segment by segment, numeric segments as numbers, so
// tools.2 comes before tools.10.
func comparePaths(x, y string) int {
	xs, ys := strings.Split(x, "."), strings.Split(y, ".")
	for i := range min(len(xs), len(ys)) {
		xn, xerr := strconv.Atoi(xs[i])
		yn, yerr := strconv.Atoi(ys[i])
		var c int
		if xerr == nil && yerr == nil {
			c = xn - yn
		} else {
			c = strings.Compare(xs[i], ys[i])
		}
		if c != 0 {
			return c
		}
	}
	return len(xs) - len(ys)
}
