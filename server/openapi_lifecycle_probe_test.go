package server_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// lifecycleBodies are the request bodies of the life-cycle endpoints (conventions §21 to
// §26), each with a valid body and the decode and rules its handler runs.
func lifecycleBodies() []lifecycleBody {
	tools := []*data.Tool{{Name: "book", Type: data.ToolCustomFunction}}
	return []lifecycleBody{
		{schema: "RolloutSet", run: decodeThen(validate.Rollout), base: map[string]any{
			"variants": []any{map[string]any{"version": 1, "weight": 100}},
			"rollback": map[string]any{"metric": "failed_rate", "threshold": 0.2, "min_calls": 50}}},
		{schema: "CallStart", run: decodeThen(validate.CallStart), base: map[string]any{
			"direction": "outbound", "to_number": "+14155550123", "agent_id": "agt_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6",
			"variables": map[string]any{"name": "Ada"}, "metadata": map[string]any{"k": "v"}}},
		{schema: "ConversationStart", run: decodeThen(validate.ConversationStart), base: map[string]any{
			"version": "draft", "variables": map[string]any{"name": "Ada"}}},
		{schema: "ConversationMessage", run: decodeThen(validate.ConversationMessage), base: map[string]any{"content": "hello"}},
		{schema: "AgentTestCreate", run: decodeThen(func(in data.AgentTestCreate) error {
			return validate.AgentTest(in.NewAgentTest(), tools)
		}), base: map[string]any{
			"name": "books", "user": map[string]any{"script": []any{"hi"}}, "max_turns": 5, "repeat": 2,
			"variables": map[string]any{"name": "Ada"}, "mocks": map[string]any{"book": map[string]any{"status": 200, "body": map[string]any{}}},
			"criteria": []any{map[string]any{"type": "says", "pattern": "booked"}}},
			context: map[string]map[string]any{
				"criteria.0.name":      {"type": "variable_equals", "pattern": nil, "value": "x"},
				"criteria.0.reason":    {"type": "ends_with", "pattern": nil},
				"criteria.0.criterion": {"type": "judge", "pattern": nil},
				"user.persona":         {"script": nil, "goal": "book"},
				"user.goal":            {"script": nil, "persona": "a caller"},
			}},
		{schema: "TestRunCreate", run: decodeThen(validate.TestRunCreate), base: map[string]any{
			"version": "draft", "test_ids": []any{"tst_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6"}}},
		{schema: "AnalysisBackfill", run: decodeThen(validate.AnalysisBackfill), base: map[string]any{
			"from": "2026-01-01T00:00:00Z", "to": "2026-02-01T00:00:00Z", "agent_version": 1}},
		{schema: "CampaignCreate", run: decodeThen(func(in data.CampaignCreate) error {
			_, err := validate.CampaignCreate(in, "US")
			return err
		}), base: map[string]any{
			"name": "March", "agent_id": "agt_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6", "number_id": "num_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6",
			"timezone": "UTC", "max_concurrent": 5, "start_at": "2026-03-09T13:00:00Z",
			"window": map[string]any{"days": []any{"mon"}, "start": "09:00", "end": "17:00"},
			"retry":  map[string]any{"on": []any{"busy"}, "max_attempts": 3, "backoff_minutes": 60},
			"recipients": []any{map[string]any{"phone_number": "+14155550101", "timezone": "UTC",
				"variables": map[string]any{"name": "Ada"}}}}},
		{schema: "DialClaim", run: decodeThen(validate.DialClaim), base: map[string]any{"max": 5, "lease_seconds": 60}},
		{schema: "SuppressionCreate", run: decodeThen(func(in data.SuppressionCreate) error {
			_, err := validate.Suppressions([]data.SuppressionCreate{in}, "", true)
			return err
		}), base: map[string]any{"phone_number": "+14155550101", "reason": "asked"}},
		{schema: "SuppressionRows", run: decodeThen(func(in data.SuppressionRows) error {
			_, err := validate.Suppressions(in.Rows, "", false)
			return err
		}), base: map[string]any{"rows": []any{map[string]any{"phone_number": "+14155550101", "reason": "asked"}}}},
	}
}

type lifecycleBody struct {
	schema string
	base   map[string]any
	run    func(body []byte) error
	// context sets siblings of a probed member (nil removes one) so that the values its
	// schema allows are valid beside them.
	context map[string]map[string]any
}

// TestOpenAPILifecycleBodiesAreEnforced probes every life-cycle request body with its
// OpenAPI schema, nested objects, list items and maps included: each member the schema
// marks required, left out, is refused naming its path; each minimum, maximum, maxLength
// and enum is accepted on the bound and refused just past it at the member's path. The
// document is generated from validate's constants, so this is validate agreeing with
// itself where the rules table states a rule by hand (required, enums, bounds).
func TestOpenAPILifecycleBodiesAreEnforced(t *testing.T) {
	_, doc := openapiDocument(t)
	schemas := dig(t, doc, "components", "schemas").(map[string]any)
	probes := 0
	for _, b := range lifecycleBodies() {
		if faults := lifecycleFaults(t, b, b.base); len(faults) > 0 {
			t.Fatalf("%s: the valid body is refused: %v", b.schema, faults)
		}
		walkLifecycle(schemas, schemas[b.schema].(map[string]any), b.base, "", func(path string, obj map[string]any, member string, prop map[string]any, required bool) {
			if required {
				body := bodyWithMember(b.base, path, member, nil, true, nil)
				faults := lifecycleFaults(t, b, body)
				if _, named := faults[validate.Join(path, member)]; !named {
					t.Errorf("%s: %s left out is not refused at its path (faults: %v)", b.schema, validate.Join(path, member), faults)
				}
				probes++
			}
			full := validate.Join(path, member)
			probeField(full, prop, func(v any, valid bool) {
				body := bodyWithMember(b.base, path, member, v, false, b.context[full])
				faults := lifecycleFaults(t, b, body)
				if _, faulted := faults[full]; faulted == valid {
					t.Errorf("%s: %s = %.40v: accepted %v, want %v (%v)", b.schema, full, v, !faulted, valid, faults[full])
				}
				probes++
			})
		})
	}
	if probes < 80 {
		t.Fatalf("only %d probes: the schemas lost their rules?", probes)
	}
}

// lifecycleFaults runs body through b's decode and rules and returns the faulted paths.
func lifecycleFaults(t *testing.T, b lifecycleBody, body map[string]any) map[string][]string {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var e *data.Error
	if err := b.run(raw); errors.As(err, &e) {
		return e.Fields
	} else if err != nil {
		t.Fatalf("%s: %v", b.schema, err)
	}
	return map[string][]string{}
}

// walkLifecycle calls visit for each member of the schema s that the body value v (an
// object) holds, at path, then descends into the member's object, list items and maps.
func walkLifecycle(schemas map[string]any, s map[string]any, v any, path string,
	visit func(path string, obj map[string]any, member string, prop map[string]any, required bool)) {
	s = resolveSchema(schemas, s)
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			if each, ok := s["additionalProperties"].(map[string]any); ok {
				for _, k := range sortedKeys(x) {
					walkLifecycle(schemas, each, x[k], validate.Join(path, k), visit)
				}
			}
			return
		}
		required := map[string]bool{}
		for _, r := range asList(s["required"]) {
			required[r.(string)] = true
		}
		for _, k := range sortedKeys(x) {
			p, ok := props[k].(map[string]any)
			if !ok {
				continue
			}
			visit(path, x, k, resolveSchema(schemas, p), required[k])
			walkLifecycle(schemas, p, x[k], validate.Join(path, k), visit)
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok && len(x) > 0 {
			walkLifecycle(schemas, items, x[0], validate.Index(path, 0), visit)
		}
	}
}

// resolveSchema follows $ref and the non-null branch of a nullable oneOf.
func resolveSchema(schemas map[string]any, s map[string]any) map[string]any {
	for {
		if ref, ok := s["$ref"].(string); ok {
			s = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
			continue
		}
		if one, ok := s["oneOf"].([]any); ok {
			for _, o := range one {
				if o := o.(map[string]any); o["type"] != "null" {
					s = o
					break
				}
			}
			if _, again := s["oneOf"]; !again {
				continue
			}
		}
		return s
	}
}

// withMember returns a deep copy of body where the object at path has member set to v
// (or removed), and its siblings set (or removed, when nil) as context says.
func bodyWithMember(body map[string]any, path, member string, v any, remove bool, context map[string]any) map[string]any {
	out := deepCopy(body).(map[string]any)
	var obj any = out
	if path != "" {
		for _, k := range strings.Split(path, ".") {
			switch o := obj.(type) {
			case map[string]any:
				obj = o[k]
			case []any:
				i, _ := strconv.Atoi(k)
				obj = o[i]
			}
		}
	}
	o := obj.(map[string]any)
	for k, c := range context {
		if c == nil {
			delete(o, k)
		} else {
			o[k] = c
		}
	}
	if remove {
		delete(o, member)
	} else {
		o[member] = v
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
