package server_test

import (
	"testing"
)

// TestSpecKnowledgeBaseSourcesOfEachType: "Delete knowledge base source" takes
// source_type "one of texts, urls, files" and the id "of the source of that type", and
// answers "200: data is the knowledge base record"; "Show knowledge base" answers the
// record with id, name, texts, urls, files (arrays), created_at, updated_at and
// workspace_id. Deleting a file source was tried; here a text and a url source go through
// their own type, a source named under another type is 404 and stays, and the record
// keeps the spec's fields (empty lists as [], never null) once its sources are gone.
func TestSpecKnowledgeBaseSourcesOfEachType(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	kb := e.createKB(tok, map[string]any{"name": "Each type", "texts": []map[string]any{{"title": "Hours", "content": "We open at nine."}},
		"urls": []string{"https://example.com/faq"}})
	id := kb["id"].(string)
	textID, urlID := items(kb, "texts")[0]["id"].(string), items(kb, "urls")[0]["id"].(string)
	base := "/api/v1/knowledge-bases/" + id + "/sources/delete/"

	for _, wrong := range []string{"urls/" + textID, "files/" + textID, "texts/" + urlID, "files/" + urlID} {
		expect(t, e.do("DELETE", base+wrong, tok, nil), 404)
	}
	if k := e.kb(tok, id); len(items(k, "texts")) != 1 || len(items(k, "urls")) != 1 {
		t.Fatalf("a delete under the wrong type removed a source: %v", k)
	}
	r := e.do("DELETE", base+"texts/"+textID, tok, nil)
	expect(t, r, 200)
	if d := r.Data(); d["id"] != id || len(items(d, "texts")) != 0 || len(items(d, "urls")) != 1 {
		t.Errorf("after deleting the text source: %s", r.Body)
	}
	r = e.do("DELETE", base+"urls/"+urlID, tok, nil)
	expect(t, r, 200)
	expect(t, e.do("DELETE", base+"urls/"+urlID, tok, nil), 404)

	shown := e.kb(tok, id)
	for _, f := range []string{"id", "name", "created_at", "updated_at", "workspace_id"} {
		if _, ok := shown[f].(string); !ok {
			t.Errorf("show: %s = %#v, want a string", f, shown[f])
		}
	}
	for _, f := range []string{"texts", "urls", "files"} {
		if l, ok := shown[f].([]any); !ok || len(l) != 0 {
			t.Errorf("show: %s = %#v, want []", f, shown[f])
		}
	}
	if shown["workspace_id"] != e.Owner.WorkspaceID {
		t.Errorf("workspace_id = %v", shown["workspace_id"])
	}
}
