package server_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// importSeeds are documents for FuzzWorkspaceImport to start from: a hand-written one with
// an agent, a knowledge base, a number; one with a version, a test, a webhook, settings
// and suppressions; and broken ones.
func importSeeds() []string {
	good, _ := json.Marshal(goodDocument())
	full := goodDocument()
	agent := full["agents"].([]any)[0].(map[string]any)
	agent["status"], agent["published_version"] = "published", 1
	agent["llm_config"].(map[string]any)["tools"] = []any{map[string]any{"name": "hang_up", "type": "end_call", "description": "End the call."}}
	version := map[string]any{"version_number": 1, "description": "first", "name": "Front desk", "created_at": "2026-01-01T00:00:00.000Z"}
	for _, k := range []string{"llm_config", "call_config", "knowledge_base_config", "prompt_config", "stt_config", "tts_config"} {
		version[k] = agent[k]
	}
	agent["versions"] = []any{version}
	agent["tests"] = []any{map[string]any{"name": "books", "user": map[string]any{"script": []any{"A table for 12345678901234567890"}},
		"max_turns": 3, "repeat": 1, "criteria": []any{map[string]any{"type": "tool_called", "name": "hang_up", "arguments": map[string]any{"n": json.Number("1.50")}}}}}
	full["numbers"] = []any{}
	full["webhooks"] = []any{map[string]any{"url": "https://hooks.example.com/x", "events": []any{"agent.created"}, "description": "d", "enabled": true}}
	full["suppressions"] = []any{map[string]any{"phone_number": "+14155550123", "reason": "asked"}}
	fullDoc, _ := json.Marshal(full)
	return []string{string(good), string(fullDoc), `{}`, `{"format":"voiceapi.workspace","version":2}`,
		`{"format":"voiceapi.workspace","version":1,"agents":[{"key":"a","name":""}]}`, `[]`, `{"agents":null}`}
}

// FuzzWorkspaceImport imports any body into a new empty workspace (docs/export-import.md),
// or, where path is set and the body is a JSON object, the body with the member at that
// dot path set to value (as JSON where it is JSON, else as a string), so that documents
// that are nearly right are explored as well as broken ones.
// Properties: a refused document is refused with the conventions' error shape (a 4xx
// with message and code, errors exactly on a 422) and the workspace exports as it did
// before; an accepted one round-trips: the workspace's export (secrets included),
// imported into another new workspace, is accepted and that workspace exports the same
// document (but for the time of export). The first workspace is deleted before the
// second import, so its phone numbers are free again.
func FuzzWorkspaceImport(f *testing.F) {
	s := testkit.NewServer(f, nil)
	var n atomic.Int64
	for _, doc := range importSeeds() {
		f.Add(doc, "", "")
	}
	f.Add(importSeeds()[0], "agents.0.name", "  ")
	f.Add(importSeeds()[1], "agents.0.tests.0.criteria.0.arguments.n", "12345678901234567891")
	f.Add(importSeeds()[1], "suppressions.0.phone_number", "+1 415 555 0123")
	f.Add(importSeeds()[0], "numbers.0.inbound_agent", `"nobody"`)
	f.Add(importSeeds()[0], "agents.0.name", "Sup\x00port") // PostgreSQL cannot store it: a 422 on both engines
	f.Fuzz(func(t *testing.T, body, path, value string) {
		body = withMember(body, path, value)
		do := func(method, path string, body any) *response {
			return testkit.Request(t, s.URL, method, path, s.Owner.Token, body)
		}
		newWorkspace := func() string {
			r := do("POST", "/api/v1/workspaces", map[string]any{"name": fmt.Sprint("fuzz ", n.Add(1))})
			testkit.Expect(t, r, 201)
			return r.Data()["id"].(string)
		}
		export := func(ws string) (map[string]any, []byte) {
			r := do("GET", "/api/v1/workspaces/"+ws+"/export?include_secrets=true", nil)
			testkit.Expect(t, r, 200)
			var doc map[string]any
			if err := json.Unmarshal(r.Body, &doc); err != nil {
				t.Fatalf("the export does not parse: %v", err)
			}
			delete(doc, "exported_at")
			// A workspace keeps its own name and description through an import.
			if w, ok := doc["workspace"].(map[string]any); ok {
				delete(w, "name")
				delete(w, "description")
			}
			return doc, r.Body
		}
		first := newWorkspace()
		before, _ := export(first)
		r := do("POST", "/api/v1/workspaces/"+first+"/import", []byte(body))
		if r.Status != 201 {
			if r.Status < 400 || r.Status >= 500 {
				t.Fatalf("import answered %d: %s", r.Status, r.Body)
			}
			testkit.Expect(t, r, r.Status)
			if after, _ := export(first); !reflect.DeepEqual(after, before) {
				t.Fatalf("a refused import (%d %s) changed the workspace:\n%v\nthen\n%v", r.Status, r.Body, before, after)
			}
			testkit.Expect(t, do("DELETE", "/api/v1/workspaces/"+first, nil), 204)
			return
		}
		imported, raw := export(first)
		testkit.Expect(t, do("DELETE", "/api/v1/workspaces/"+first, nil), 204)
		second := newWorkspace()
		again := do("POST", "/api/v1/workspaces/"+second+"/import", raw)
		if again.Status != 201 {
			t.Fatalf("the export of an accepted import is refused: %d %s\ndocument %s\nexport %s", again.Status, again.Body, body, raw)
		}
		if reexported, _ := export(second); !reflect.DeepEqual(reexported, imported) {
			a, _ := json.Marshal(imported)
			b, _ := json.Marshal(reexported)
			t.Fatalf("the workspace exports differently after a round trip:\n%s\nthen\n%s\ndocument %s", a, b, body)
		}
		testkit.Expect(t, do("DELETE", "/api/v1/workspaces/"+second, nil), 204)
	})
}

// withMember is body with the member at the dot path set to value (JSON, else a string);
// body itself when it is no JSON object, path is empty or leads nowhere.
func withMember(body, path, value string) string {
	var doc map[string]any
	if path == "" || json.Unmarshal([]byte(body), &doc) != nil || doc == nil {
		return body
	}
	var v any = value
	if json.Valid([]byte(value)) {
		v = json.RawMessage(value)
	}
	parts := strings.Split(path, ".")
	var cur any = doc
	for i, p := range parts {
		last := i == len(parts)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[p] = v
			}
			cur = c[p]
		case []any:
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || n >= len(c) {
				return body
			}
			if last {
				c[n] = v
			}
			cur = c[n]
		default:
			return body
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return string(out)
}
