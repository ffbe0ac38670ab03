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

// TestOpenAPIParametersUnique fails when an operation declares one parameter twice (name
// and in), which OpenAPI forbids (redocly's operation-parameters-unique): GET
// /analytics/calls had agent_version from its query list and again from the per-version
// figures' declaration.
func TestOpenAPIParametersUnique(t *testing.T) {
	_, doc := openapiDocument(t)
	paths, _ := doc["paths"].(map[string]any)
	n := 0
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			params, _ := op.(map[string]any)["parameters"].([]any)
			seen := map[string]bool{}
			for _, p := range params {
				pm, _ := p.(map[string]any)
				key, _ := pm["in"].(string)
				name, _ := pm["name"].(string)
				if key == "" && pm["$ref"] != nil {
					key, name = "ref", pm["$ref"].(string)
				}
				key += ":" + name
				if seen[key] {
					t.Errorf("%s %s declares the parameter %s twice", method, path, key)
				}
				seen[key] = true
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no parameter read: the document's shape changed")
	}
}

// TestOpenAPIComponentsReachableFromPaths fails when a component schema is named only from
// the webhooks section (or not at all): generators that prune unused components by
// walking the paths (oapi-codegen) drop it and then cannot build the webhook bodies that
// name it, as happened with job.failed's payload. An event-only payload is written inline.
func TestOpenAPIComponentsReachableFromPaths(t *testing.T) {
	_, doc := openapiDocument(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	const prefix = "#/components/schemas/"
	reached := map[string]bool{}
	var reach func(v any)
	reach = func(v any) {
		walkSchemas(v, "", func(_ string, m map[string]any) {
			ref, ok := m["$ref"].(string)
			name, isSchema := strings.CutPrefix(ref, prefix)
			if !ok || !isSchema || reached[name] {
				return
			}
			reached[name] = true
			reach(schemas[name])
		})
	}
	reach(doc["paths"])
	for _, kind := range []string{"responses", "parameters", "requestBodies", "headers"} {
		reach(doc["components"].(map[string]any)[kind]) // named from the paths by reference
	}
	for name := range schemas {
		if !reached[name] {
			t.Errorf("component schema %s is not reachable from the paths: oapi-codegen prunes it; write an event-only payload inline", name)
		}
	}
}
