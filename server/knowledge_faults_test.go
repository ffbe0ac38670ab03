package server_test

import "testing"

// Decoding faults and rule faults of one knowledge base request come back together in one
// 422, and nothing is stored: the handler decodes, the service adds its rules' faults.
func TestKnowledgeBaseDecodingAndRuleFaultsInOne422(t *testing.T) {
	e := newKBEnv(t, kbEnvOptions{})
	tok := e.Owner.Token
	const kbs = "/api/v1/knowledge-bases"
	r := e.do("POST", kbs, tok, map[string]any{"name": 5, "texts": []any{map[string]any{"content": " "}}, "urls": []any{"ftp://x"}})
	expectFields(t, r, "name", "texts.0.content", "urls.0")
	if ids := listIDs(t, e.do("GET", kbs, tok, nil)); len(ids) != 0 {
		t.Fatalf("a refused create stored %v", ids)
	}
	id := e.createKB(tok, map[string]any{"name": "Faults"})["id"].(string)
	r = e.do("PUT", kbs+"/"+id, tok, map[string]any{"name": "", "extra": true})
	expectFields(t, r, "name", "extra")
	r = e.do("POST", kbs+"/"+id+"/sources/add", tok, map[string]any{"texts": []any{map[string]any{"content": 7}}, "urls": []any{"https://a.example/x", "https://user:pw@b.example/"}})
	expectFields(t, r, "texts.0.content", "urls.1")
	r = e.do("POST", kbs+"/"+id+"/query", tok, map[string]any{"query": "", "chunks_to_retrieve": "3"})
	expectFields(t, r, "query", "chunks_to_retrieve")
	// A multipart part fault and a rule fault of the same request.
	body, ct := multipartBody(t, part{"notes", "", []byte("x")}, part{"urls", "", []byte("ftp://x")})
	r = e.do("POST", kbs+"/"+id+"/sources/add", tok, body, "Content-Type", ct)
	expectFields(t, r, "notes", "urls.0")
	got := e.do("GET", kbs+"/"+id, tok, nil)
	expect(t, got, 200)
	if d := got.Data(); d["name"] != "Faults" || len(d["texts"].([]any))+len(d["urls"].([]any)) != 0 {
		t.Errorf("refused requests changed the knowledge base: %v", d)
	}
}
