package server_test

import (
	"fmt"
	"reflect"
	"testing"
)

// analysisGroup is an analysis_config with a field of every type.
func analysisGroup() map[string]any {
	return map[string]any{
		"fields": []any{
			map[string]any{"name": "outcome", "type": "enum", "description": "How the call ended", "choices": []any{"booked", "declined", "callback"}, "required": true},
			map[string]any{"name": "party_size", "type": "number", "description": "Guests"},
			map[string]any{"name": "wants_newsletter", "type": "boolean", "description": "Asked for the newsletter"},
			map[string]any{"name": "visit_date", "type": "date", "description": "The day booked"},
			map[string]any{"name": "notes", "type": "string", "description": "Anything else"},
		},
		"success_criterion": "A table was booked.",
		"summary":           true,
		"auto":              false,
	}
}

func TestAnalysisConfigDefault(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(e.Owner.Token, map[string]any{"name": "Default"})
	want := map[string]any{"fields": []any{}, "success_criterion": nil, "summary": false, "auto": false}
	if !reflect.DeepEqual(a["analysis_config"], want) {
		t.Fatalf("analysis_config = %#v, want %#v", a["analysis_config"], want)
	}
}

// TestAnalysisConfigIsVersioned follows the group through an agent's life: set on
// create, merged on update, snapshotted by publish, diffed, restored.
func TestAnalysisConfigIsVersioned(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	a := e.createAgent(tok, map[string]any{"name": "Bookings", "analysis_config": analysisGroup()})
	id := a["id"].(string)
	if got := path(a, "analysis_config.fields.0.choices.2"); got != "callback" || path(a, "analysis_config.fields.1.choices") == nil {
		t.Fatalf("created: %v", a["analysis_config"])
	}
	e.publish(tok, id, nil)

	r := e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"analysis_config": map[string]any{"auto": true, "success_criterion": nil}})
	expect(t, r, 200)
	if d := r.Data(); path(d, "analysis_config.auto") != true || path(d, "analysis_config.success_criterion") != nil ||
		len(path(d, "analysis_config.fields").([]any)) != 5 || d["status"] != "draft" {
		t.Fatalf("updated: %v (%v)", d["analysis_config"], d["status"])
	}
	r = e.do("GET", "/api/v1/agents/"+id+"/versions/1/diff/current", tok, nil)
	expect(t, r, 200)
	var paths []string
	for _, c := range r.List() {
		paths = append(paths, fmt.Sprint(c.(map[string]any)["path"]))
	}
	if want := []string{"analysis_config.auto", "analysis_config.success_criterion"}; !reflect.DeepEqual(paths, want) {
		t.Fatalf("diff paths = %v, want %v", paths, want)
	}
	e.publish(tok, id, nil)
	r = e.do("GET", "/api/v1/agents/"+id+"/versions/1", tok, nil)
	expect(t, r, 200)
	if path(r.Data(), "analysis_config.success_criterion") != "A table was booked." || path(r.Data(), "analysis_config.auto") != false {
		t.Fatalf("version 1 = %v", r.Data()["analysis_config"])
	}
	expect(t, e.do("POST", "/api/v1/agents/"+id+"/versions/1/restore", tok, nil), 200)
	got, _ := e.agent(tok, id)
	if path(got, "analysis_config.auto") != false || path(got, "analysis_config.success_criterion") != "A table was booked." {
		t.Fatalf("restored: %v", got["analysis_config"])
	}
}

func TestAnalysisConfigFaults(t *testing.T) {
	e := newEnv(t)
	fields := []any{}
	for i := range 51 {
		fields = append(fields, map[string]any{"name": fmt.Sprintf("f%d", i), "type": "string", "description": "d"})
	}
	before := e.createAgent(e.Owner.Token, map[string]any{"name": "Faults"})
	id := before["id"].(string)
	for _, c := range []struct {
		name  string
		group map[string]any
		paths []string
	}{
		{"51 fields", map[string]any{"fields": fields}, []string{"analysis_config.fields"}},
		{"a name outside the pattern", map[string]any{"fields": []any{map[string]any{"name": "party size", "type": "number", "description": "d"}}},
			[]string{"analysis_config.fields.0.name"}},
		{"duplicate names", map[string]any{"fields": []any{
			map[string]any{"name": "a", "type": "number", "description": "d"}, map[string]any{"name": "a", "type": "string", "description": "d"}}},
			[]string{"analysis_config.fields.1.name"}},
		{"an enum with no choices", map[string]any{"fields": []any{map[string]any{"name": "o", "type": "enum", "description": "d", "choices": []any{}}}},
			[]string{"analysis_config.fields.0.choices"}},
		{"every fault at once", map[string]any{"fields": []any{map[string]any{"name": "1", "type": "enum", "description": ""}}, "success_criterion": ""},
			[]string{"analysis_config.fields.0.name", "analysis_config.fields.0.description", "analysis_config.fields.0.choices", "analysis_config.success_criterion"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("PUT", "/api/v1/agents/"+id, e.Owner.Token, map[string]any{"analysis_config": c.group})
			expect(t, r, 422)
			expectFields(t, r, c.paths...)
			if got, _ := e.agent(e.Owner.Token, id); !reflect.DeepEqual(got, before) {
				t.Fatalf("a refused update changed the agent:\n%v\n%v", got, before)
			}
		})
	}
}

func TestAnalysisConfigExportImport(t *testing.T) {
	src := exportEnv(t)
	a := src.createAgent(src.Owner.Token, map[string]any{"name": "Bookings", "analysis_config": analysisGroup()})
	src.publish(src.Owner.Token, a["id"].(string), nil)
	_, raw := src.export(src.Owner.Token, src.Owner.WorkspaceID, "")
	dst := exportEnv(t)
	r := dst.do("POST", "/api/v1/workspaces/"+dst.Owner.WorkspaceID+"/import", dst.Owner.Token, raw)
	expect(t, r, 201)
	id := path(r.Data(), "agents.0.id").(string)
	got, _ := dst.agent(dst.Owner.Token, id)
	if !reflect.DeepEqual(got["analysis_config"], a["analysis_config"]) {
		t.Fatalf("imported analysis_config = %v, want %v", got["analysis_config"], a["analysis_config"])
	}
	v := dst.do("GET", "/api/v1/agents/"+id+"/versions/1", dst.Owner.Token, nil)
	expect(t, v, 200)
	if !reflect.DeepEqual(v.Data()["analysis_config"], a["analysis_config"]) {
		t.Fatalf("imported version's analysis_config = %v", v.Data()["analysis_config"])
	}
}
