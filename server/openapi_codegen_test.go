package server_test

import (
	"sort"
	"strings"
	"testing"
	"unicode"
)

// identifier is the name a client generator makes of a property: letters and digits only,
// case folded (oapi-codegen drops "[]", "." and "_" and capitalises).
func identifier(name string) string {
	var b strings.Builder
	for _, r := range name {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// walkSchemas calls fn on every JSON object of the document with its JSON path.
func walkSchemas(v any, path string, fn func(path string, m map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(path, x)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkSchemas(x[k], path+"/"+k, fn)
		}
	case []any:
		for _, e := range x {
			walkSchemas(e, path+"/[]", fn)
		}
	}
}

// TestOpenAPIPropertyIdentifiersUnique fails when two properties of one schema become the
// same identifier in a generated client, as files and files[] did in the sources/add
// multipart body (oapi-codegen: "Files redeclared").
func TestOpenAPIPropertyIdentifiersUnique(t *testing.T) {
	_, doc := openapiDocument(t)
	walkSchemas(doc, "", func(path string, m map[string]any) {
		props, ok := m["properties"].(map[string]any)
		if !ok || strings.HasSuffix(path, "/properties") {
			return
		}
		seen := map[string]string{}
		for name := range props {
			id := identifier(name)
			if other, dup := seen[id]; dup {
				t.Errorf("%s: properties %q and %q are the same identifier %q", path, name, other, id)
			}
			seen[id] = name
		}
	})
}
