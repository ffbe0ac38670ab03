package openapi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/validate"
)

// Examples are derived from the finished schemas rather than written by hand: a value that
// honours each schema's enum, bounds, format and pattern, with every required member
// present. A field, a rule or a bound changed in code changes its example with it.

// patternExamples are strings matching the patterns the document uses. A pattern missing
// here fails Build, so a new one cannot get a made-up example.
var patternExamples = map[string]string{
	`^([1-9][0-9]*|current)$`: "current",
	`^(anger|positivity|surprise|sadness|curiosity)(:(lowest|low|high|highest))?$`: "positivity",
	"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$":   "X-Example",
	`^[a-zA-Z_-][a-zA-Z0-9_-]*$`:      "example_name",
	`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`: "us-east-1",
	`^\+[1-9]\d{1,14}$`:               "+14155550100",
	`^\d{4}-\d{2}-\d{2}$`:             "2026-01-15",
	`^[a-z][a-z0-9_]{0,31}$`:          "order_id",
	`^([01]\d|2[0-3]):[0-5]\d$`:       "09:00",
	`^-?\d{1,12}(\.\d{1,6})?$`:        "0.59",
	`^\d{1,7}(\.\d{1,6})?$`:           "0.59",
	`^[A-Z]{3}$`:                      "USD",
	validate.ExportKeyPattern:         "support-agent",
}

// formatExamples are strings of each format the document uses.
var formatExamples = map[string]string{
	"date-time": "2026-01-15T09:30:00Z",
	"date":      "2026-01-15",
	"email":     "user@example.com",
	"uri":       "https://example.com/hook",
	"byte":      "ZXhhbXBsZQ==",
}

// exampleGen builds example values from schemas, resolving references to schemas.
type exampleGen struct {
	schemas map[string]any
	// full makes objects carry every property (responses); otherwise only the required
	// ones (requests), so that an example body is the smallest one the server accepts.
	full bool
	// inRef are the references being expanded: a schema reaching itself stops there.
	inRef map[string]bool
}

// example returns a value valid for schema s; name is the member it is for, which the
// string example carries so that examples read as what they are.
func (e *exampleGen) example(s map[string]any, name string) any {
	if ref, ok := s["$ref"].(string); ok {
		if e.inRef[ref] {
			panic(fmt.Sprintf("openapi: example: %s contains itself", ref))
		}
		if e.inRef == nil {
			e.inRef = map[string]bool{}
		}
		e.inRef[ref] = true
		defer delete(e.inRef, ref)
		target, ok := e.schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		if !ok {
			panic(fmt.Sprintf("openapi: example: unknown reference %s", ref))
		}
		return e.example(target, name)
	}
	if v, ok := s["const"]; ok {
		return v
	}
	if enum := listOf(s["enum"]); len(enum) > 0 {
		return enum[0]
	}
	if v, ok := s["default"]; ok && v != nil {
		return v
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		for _, alt := range listOf(s[k]) {
			if m, ok := alt.(map[string]any); ok && m["type"] != "null" {
				return e.example(m, name)
			}
		}
	}
	// An object's allOf holds its conditions (conditions.go), not its shape; an event's
	// holds a record and what the event adds to it (agent_tests.go): the objects' examples
	// are merged.
	if all := listOf(s["allOf"]); len(all) > 0 && schemaType(s) == "" && s["properties"] == nil {
		var merged map[string]any
		for i, part := range all {
			m, ok := part.(map[string]any)
			if !ok {
				continue
			}
			ex := e.example(m, name)
			obj, isObj := ex.(map[string]any)
			if i == 0 && !isObj {
				return ex
			}
			if merged == nil {
				merged = map[string]any{}
			}
			for k, v := range obj {
				merged[k] = v
			}
		}
		if merged != nil {
			return merged
		}
	}
	switch schemaType(s) {
	case "object":
		return e.object(s)
	case "array":
		return e.array(s, name)
	case "string":
		return e.str(s, name)
	case "integer":
		return int64(e.number(s))
	case "number":
		return e.number(s)
	case "boolean":
		return false
	case "null":
		return nil
	}
	if _, ok := s["properties"]; ok {
		return e.object(s)
	}
	return map[string]any{}
}

func (e *exampleGen) object(s map[string]any) any {
	props, _ := s["properties"].(map[string]any)
	out := map[string]any{}
	required := stringsOf(s["required"])
	for name, p := range props {
		if !e.full && !slices.Contains(required, name) {
			continue
		}
		if m, ok := p.(map[string]any); ok {
			out[name] = e.example(m, name)
		}
	}
	return out
}

func (e *exampleGen) array(s map[string]any, name string) any {
	items, _ := s["items"].(map[string]any)
	n := 1
	if mn, ok := toFloat(s["minItems"]); ok && int(mn) > n {
		n = int(mn)
	}
	if !e.full && s["minItems"] == nil {
		n = 0 // an optional list may be empty; a required one is shown empty too
	}
	out := make([]any, 0, n)
	for i := 0; i < n && items != nil; i++ {
		out = append(out, e.example(items, name))
	}
	return out
}

func (e *exampleGen) str(s map[string]any, name string) string {
	if p, ok := s["pattern"].(string); ok {
		v, ok := patternExamples[p]
		if !ok {
			panic(fmt.Sprintf("openapi: example: no example for pattern %s (add one to patternExamples)", p))
		}
		return v
	}
	if f, ok := s["format"].(string); ok {
		if v, ok := formatExamples[f]; ok {
			return v
		}
	}
	v := "example"
	if name != "" {
		v = "example " + strings.ReplaceAll(name, "_", " ")
	}
	if mx, ok := toFloat(s["maxLength"]); ok && len(v) > int(mx) {
		v = v[:int(mx)]
	}
	if mn, ok := toFloat(s["minLength"]); ok && len(v) < int(mn) {
		v += strings.Repeat("x", int(mn)-len(v))
	}
	return v
}

func (e *exampleGen) number(s map[string]any) float64 {
	lo, hasLo := toFloat(s["minimum"])
	if x, ok := toFloat(s["exclusiveMinimum"]); ok {
		lo, hasLo = x+1, true
	}
	hi, hasHi := toFloat(s["maximum"])
	switch {
	case hasLo && lo > 0:
		return lo
	case hasHi && hi < 0:
		return hi
	case hasLo || hasHi:
		return 0
	}
	return 1
}

// schemaType is the schema's type, the first that is not null when it lists several.
func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []string:
		for _, x := range t {
			if x != "null" {
				return x
			}
		}
	case []any:
		for _, x := range t {
			if x != "null" {
				return fmt.Sprint(x)
			}
		}
	}
	return ""
}

func listOf(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	}
	return nil
}

func stringsOf(v any) []string {
	var out []string
	for _, x := range listOf(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// addExamples gives every JSON and multipart body of paths, and the shared error
// responses, an example built from its schema.
func addExamples(doc map[string]any) {
	components, _ := doc["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	paths, _ := doc["paths"].(map[string]any)
	hooks, _ := doc["webhooks"].(map[string]any)
	for i, ops := range merged(paths, hooks) {
		opsm, _ := ops.(map[string]any)
		for _, o := range opsm {
			op, _ := o.(map[string]any)
			if rb, ok := op["requestBody"].(map[string]any); ok {
				// A webhook's body is written by the server: shown whole, as responses are.
				mediaExamples(rb, &exampleGen{schemas: schemas, full: i >= len(paths)})
			}
			responses, _ := op["responses"].(map[string]any)
			for _, r := range responses {
				if rm, ok := r.(map[string]any); ok {
					mediaExamples(rm, &exampleGen{schemas: schemas, full: true})
				}
			}
		}
	}
	if responses, ok := components["responses"].(map[string]any); ok {
		for _, r := range responses {
			if rm, ok := r.(map[string]any); ok {
				mediaExamples(rm, &exampleGen{schemas: schemas, full: true})
			}
		}
	}
}

// mediaExamples sets the example of each media type of a body that has a JSON schema.
func mediaExamples(body map[string]any, g *exampleGen) {
	content, _ := body["content"].(map[string]any)
	for media, mt := range content {
		m, _ := mt.(map[string]any)
		s, _ := m["schema"].(map[string]any)
		if s == nil || (media != "application/json" && media != "multipart/form-data") {
			continue
		}
		if _, done := m["example"]; !done {
			m["example"] = g.example(s, "")
		}
	}
}

// withExamples is addExamples reporting a schema it cannot exemplify as an error.
func withExamples(doc map[string]any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	addExamples(doc)
	return nil
}

// merged is the path items of the paths and then the webhooks sections.
func merged(a, b map[string]any) []any {
	out := make([]any, 0, len(a)+len(b))
	for _, m := range []map[string]any{a, b} {
		for _, v := range m {
			out = append(out, v)
		}
	}
	return out
}
