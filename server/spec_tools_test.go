package server_test

import (
	"testing"
)

// TestSpecToolItemsMayBeNull: llm_config.tools is an "array of tool objects; each item
// may be null" (llm_config). A null item is accepted, kept in its place (the next item's
// errors still name its own index), shown as null, and carried into the version a
// publish makes and back by a restore; a second null item is no duplicate name.
func TestSpecToolItemsMayBeNull(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	id := e.createAgent(tok, map[string]any{"name": "Nulls", "llm_config": map[string]any{
		"tools": []any{nil, map[string]any{"name": "end", "type": "end_call"}, nil}}})["id"].(string)
	checkTools := func(where string, d map[string]any) {
		t.Helper()
		tools, _ := path(d, "llm_config.tools").([]any)
		if len(tools) != 3 || tools[0] != nil || tools[2] != nil || path(d, "llm_config.tools.1.name") != "end" {
			t.Errorf("%s: tools = %#v, want [null, end, null]", where, path(d, "llm_config.tools"))
		}
	}
	a, _ := e.agent(tok, id)
	checkTools("show", a)
	expectFields(t, e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"llm_config": map[string]any{
		"tools": []any{nil, map[string]any{"name": "1bad", "type": "end_call"}}}}), "llm_config.tools.1.name")

	e.publish(tok, id, nil)
	r := e.do("GET", "/api/v1/agents/"+id+"/versions/1", tok, nil)
	expect(t, r, 200)
	checkTools("version 1", r.Data())
	expect(t, e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"llm_config": map[string]any{"tools": []any{}}}), 200)
	r = e.do("POST", "/api/v1/agents/"+id+"/versions/1/restore", tok, nil)
	expect(t, r, 200)
	checkTools("restored", r.Data())
}
