package openapi

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// The schemas of the OpenAPI document are generated from the Go types the handlers decode
// and encode, so that a field added to a record or a body appears in the document without
// anyone remembering to write it down. The rules the types cannot say (bounds, enums,
// patterns, which request members are required) come from fieldRules in
// rules.go.

// schemaMode says which side of the wire a schema describes. A type may appear on both
// (llm_config is in an agent record and in an agent body), and the two differ: a response
// lists the members always present as required; a request refuses unknown members and
// requires only what validation requires.
type schemaMode int

const (
	modeOut schemaMode = iota // a response body
	modeIn                    // a request body
)

var (
	timeType       = reflect.TypeFor[data.Time]()
	moneyType      = reflect.TypeFor[data.Money]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	optionalType   = reflect.TypeFor[interface{ Optional() }]()
)

// schemaNames names the unexported body types of this package, whose Go names would make
// poor schema names.
var schemaNames = map[reflect.Type]string{
	reflect.TypeFor[agentCreateBody](): "AgentCreate",
	reflect.TypeFor[agentUpdateBody](): "AgentUpdate",
	reflect.TypeFor[healthBody]():      "Health",
	reflect.TypeFor[replayResult]():    "ReplayResult",
}

// schemaGen collects the component schemas while operations are described.
type schemaGen struct {
	components map[string]any
	// named maps a struct type and mode to its component name, so that each is built once.
	named map[typeMode]string
	// owner tells which type and mode took a component name, to catch two types that
	// would share one.
	owner map[string]typeMode
	// outputs are the struct types that appear in some response: their request twins are
	// named with an "Input" suffix.
	outputs map[reflect.Type]bool
}

type typeMode struct {
	t    reflect.Type
	mode schemaMode
}

func newSchemaGen() *schemaGen {
	return &schemaGen{
		components: map[string]any{},
		named:      map[typeMode]string{},
		owner:      map[string]typeMode{},
		outputs:    map[reflect.Type]bool{},
	}
}

// markOutput records t and every struct type reachable from it as appearing in responses.
func (g *schemaGen) markOutput(t reflect.Type) {
	t = unwrap(t)
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		g.markOutput(t.Elem())
	case reflect.Struct:
		if t == timeType || g.outputs[t] {
			return
		}
		g.outputs[t] = true
		for _, f := range jsonFields(t) {
			g.markOutput(f.Type)
		}
	}
}

// unwrap strips pointers and data.Opt.
func unwrap(t reflect.Type) reflect.Type {
	for {
		switch {
		case t.Kind() == reflect.Pointer:
			t = t.Elem()
		case isOpt(t):
			t = t.Field(1).Type
		default:
			return t
		}
	}
}

// isOpt reports whether t is data.Opt[T]: an optional member, nullable only for a pointer T.
func isOpt(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.Implements(optionalType)
}

// ref returns a reference to the component schema of struct type t in mode, building it
// on first use.
func (g *schemaGen) ref(t reflect.Type, mode schemaMode) map[string]any {
	key := typeMode{t, mode}
	name, ok := g.named[key]
	if !ok {
		name = g.nameOf(t, mode)
		if prev, taken := g.owner[name]; taken && prev != key {
			panic(fmt.Sprintf("openapi: %s and %s would both be schema %s", prev.t, t, name))
		}
		g.owner[name] = key
		g.named[key] = name
		g.components[name] = map[string]any{} // placeholder: breaks cycles
		g.components[name] = g.object(t, mode, name)
	}
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

func (g *schemaGen) nameOf(t reflect.Type, mode schemaMode) string {
	name, ok := schemaNames[t]
	if !ok {
		name = t.Name()
		if name == "" || strings.ToLower(name[:1]) == name[:1] || strings.Contains(name, "[") {
			panic(fmt.Sprintf("openapi: type %s needs an entry in schemaNames", t))
		}
	}
	if mode == modeIn && g.outputs[t] {
		name += "Input"
	}
	return name
}

// object builds the schema of struct type t: its JSON members (embedded structs
// flattened, as encoding/json and the strict decoder do), with the rules of
// fieldRules[name of t].
func (g *schemaGen) object(t reflect.Type, mode schemaMode, name string) map[string]any {
	props := map[string]any{}
	required := []string{}
	rules := fieldRules[strings.TrimSuffix(name, "Input")]
	for _, f := range jsonFields(t) {
		member, omitempty := jsonName(f)
		rule := rules[member]
		if f.Tag.Get("strict") == "readonly" {
			// A record's member a body may not give (data.ReadOnly): named, so that a
			// client sending a record back learns to drop it; any value is refused.
			props[member] = readOnlyMember(rule)
			continue
		}
		props[member] = g.field(f, mode, rule)
		switch mode {
		case modeOut:
			// A member without omitempty is always written.
			if !omitempty {
				required = append(required, member)
			}
		case modeIn:
			// strict:"required": the decoder refuses the member's absence.
			if rule.Required || f.Tag.Get("strict") == "required" {
				required = append(required, member)
			}
		}
	}
	for member := range rules {
		if _, ok := props[member]; !ok {
			panic(fmt.Sprintf("openapi: fieldRules names %s.%s, which %s does not have", name, member, t))
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		slices.Sort(required)
		s["required"] = required
	}
	if mode == modeIn {
		// Unknown members are a validation error (conventions §1).
		s["additionalProperties"] = false
	}
	if d := typeDocs[strings.TrimSuffix(name, "Input")]; d != "" {
		s["description"] = d
	}
	return s
}

// readOnlyMember is the schema of a body's read-only member.
func readOnlyMember(rule fieldRule) map[string]any {
	s := map[string]any{"readOnly": true}
	s["description"] = cmp.Or(rule.Description, "Read-only: a body may not give it.")
	return s
}

// field builds the schema of one member, nullable as the strict decoder takes it: a
// pointer or a map takes null unless the field is tagged strict:"nonnull", and
// data.Opt[T] (optional) lets T decide, a data.Opt of a map too.
func (g *schemaGen) field(f reflect.StructField, mode schemaMode, rule fieldRule) map[string]any {
	t := f.Type
	if isOpt(t) {
		t = t.Field(1).Type
	}
	nullable := rule.Nullable
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Map {
		nullable = f.Tag.Get("strict") != "nonnull" && !rule.NotNull
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := g.schema(t, mode)
	rule.apply(s)
	if nullable {
		s = orNull(s)
	}
	return s
}

// schema builds the schema of a type outside any member: structs become references.
func (g *schemaGen) schema(t reflect.Type, mode schemaMode) map[string]any {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t == moneyType:
		return map[string]any{"type": "string", "pattern": moneyPattern, "description": "A decimal amount of the currency, at most 6 decimals."}
	case t == rawMessageType:
		return map[string]any{} // any JSON value
	case t == conversationVersionType:
		return conversationVersionSchema()
	case t == testRunVersionType:
		return testRunVersionSchema()
	case isOpt(t):
		return g.schema(t.Field(1).Type, mode)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return orNull(g.schema(t.Elem(), mode))
	case reflect.Struct:
		return g.ref(t, mode)
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": g.schema(t.Elem(), mode)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem(), mode)}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int32:
		return map[string]any{"type": "integer"}
	case reflect.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Interface:
		return map[string]any{}
	}
	panic(fmt.Sprintf("openapi: no schema for %s", t))
}

// orNull widens s to accept null as well: ["string", "null"] for a simple type, a oneOf
// for a reference. An enum must list null too, or it would still refuse it.
func orNull(s map[string]any) map[string]any {
	if len(s) == 0 {
		return s // any value, null included
	}
	if _, ok := s["$ref"]; ok {
		return map[string]any{"oneOf": []any{s, map[string]any{"type": "null"}}}
	}
	if typ, ok := s["type"].(string); ok {
		s["type"] = []string{typ, "null"}
	}
	if enum, ok := s["enum"].([]any); ok {
		s["enum"] = append(enum, nil)
	}
	return s
}

// jsonFields returns the struct's fields as encoding/json sees them: exported, embedded
// structs flattened, "-" skipped.
func jsonFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		if name, _ := jsonName(f); name == "-" {
			continue
		}
		out = append(out, f)
	}
	return out
}

// jsonName returns the member name of a field and whether it is omitted when empty.
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	if tag == "-" {
		return "-", false
	}
	if name == "" {
		name = f.Name
	}
	return name, slices.Contains(strings.Split(opts, ","), "omitempty")
}
