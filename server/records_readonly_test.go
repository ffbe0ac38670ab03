package server_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestRecordSentBackNamesItsReadOnlyMembers: a client that reads a record and sends it
// back whole (as agents-as-code tools and hand-written scripts do) is told which members
// to drop, each "read-only", not "not a known field"; nothing is stored. Sent back without
// them, the record is accepted as it stands. Agents had this; tests, numbers, webhooks
// and knowledge bases said "not a known field" of their own id.
func TestRecordSentBackNamesItsReadOnlyMembers(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	agent := e.createAgent(tok, map[string]any{"name": "Reader"})["id"].(string)
	kinds := []struct {
		name, list string
		create     map[string]any
		readOnly   []string // on the update; a create refuses the same, but for update-only ones
		createOnly []string // members the create takes and the update does not
	}{
		{"agent test", "/api/v1/agents/" + agent + "/tests",
			map[string]any{"name": "greets", "user": map[string]any{"script": []string{"hello"}},
				"criteria": []any{map[string]any{"type": "judge", "criterion": "It greets."}}},
			[]string{"agent_id", "created_at", "id", "updated_at", "workspace_id"}, nil},
		{"number", "/api/v1/numbers",
			map[string]any{"phone_number": "+14155550177", "provider": "sip", "nickname": "front desk"},
			[]string{"created_at", "id", "phone_number", "updated_at", "workspace_id"}, []string{"phone_number"}},
		{"webhook", "/api/v1/webhooks",
			map[string]any{"url": "https://example.com/hook", "events": []string{"call.ended"}},
			[]string{"created_at", "id", "updated_at", "workspace_id"}, nil},
		{"call", "/api/v1/calls",
			map[string]any{"agent_id": agent, "direction": "web", "variables": map[string]any{"caller": "Ann"}},
			[]string{"agent_id", "agent_version", "analysis_error", "analysis_source", "analyzed_at", "cost", "created_at",
				"direction", "from_number", "id", "number_id", "to_number", "updated_at", "workspace_id"},
			[]string{"agent_id", "agent_version", "direction", "from_number", "number_id", "to_number"}},
		{"knowledge base", "/api/v1/knowledge-bases",
			map[string]any{"name": "Menu", "texts": []any{map[string]any{"title": "Hours", "content": "Open daily from noon."}}},
			[]string{"created_at", "embeddings", "files", "id", "texts", "updated_at", "urls", "workspace_id"}, []string{"texts", "urls"}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			r := e.do("POST", k.list, tok, k.create)
			expect(t, r, 201)
			id := r.Data()["id"].(string)
			show := func() map[string]any {
				t.Helper()
				r := e.do("GET", k.list+"/"+id, tok, nil)
				expect(t, r, 200)
				return r.Data()
			}
			rec := show()
			for _, m := range k.readOnly {
				rec[m] = cmpOr(rec[m], "x") // a record without embeddings still gets the member
			}

			// Sent back whole: a 422 naming each read-only member as such, nothing stored.
			r = e.do("PUT", k.list+"/"+id, tok, rec)
			expect(t, r, 422)
			if got := readOnlyFaults(r.FieldErrors()); !slices.Equal(got, k.readOnly) {
				t.Errorf("update: read-only members %v, want %v (faults %v)", got, k.readOnly, r.FieldErrors())
			}
			if after := show(); !reflect.DeepEqual(after["updated_at"], rec["updated_at"]) {
				t.Errorf("a refused update changed the record: updated_at %v, was %v", after["updated_at"], rec["updated_at"])
			}

			// A create given the record refuses the same members, but those it takes.
			before := len(e.do("GET", k.list, tok, nil).List())
			r = e.do("POST", k.list, tok, rec)
			expect(t, r, 422)
			want := slices.DeleteFunc(slices.Clone(k.readOnly), func(m string) bool { return slices.Contains(k.createOnly, m) })
			if got := readOnlyFaults(r.FieldErrors()); !slices.Equal(got, want) {
				t.Errorf("create: read-only members %v, want %v (faults %v)", got, want, r.FieldErrors())
			}
			if n := len(e.do("GET", k.list, tok, nil).List()); n != before {
				t.Errorf("a refused create stored a record: %d listed, were %d", n, before)
			}

			// Sent back without them (and without its nulls, which an update leaves out
			// where it keeps a member as it is): accepted, and the record reads the same.
			body := maps.Clone(rec)
			for _, m := range k.readOnly {
				delete(body, m)
			}
			maps.DeleteFunc(body, func(_ string, v any) bool { return v == nil })
			r = e.do("PUT", k.list+"/"+id, tok, body)
			expect(t, r, 200)
			after := r.Data()
			for m, v := range body {
				if !reflect.DeepEqual(after[m], v) {
					t.Errorf("round trip changed %s: %v, was %v", m, after[m], v)
				}
			}
		})
	}
}

// readOnlyFaults lists, sorted, the members a 422's field errors call read-only.
func readOnlyFaults(fields map[string]any) []string {
	var out []string
	for path, msgs := range fields {
		for _, m := range msgs.([]any) {
			if strings.HasSuffix(m.(string), "is read-only.") {
				out = append(out, path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// cmpOr returns v, or def when v is nil.
func cmpOr(v, def any) any {
	if v == nil {
		return def
	}
	return v
}
