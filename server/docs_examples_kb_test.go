package server_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// The knowledge base examples, on a knowledge base holding a text, a url and a file as
// knowledge-bases.md's record does.

// docKnowledgeBase creates knowledge-bases.md's "Support" with one source of each type
// and returns its id.
func (e *docEnv) docKnowledgeBase(t *testing.T) string {
	t.Helper()
	r := e.Do("POST", "/api/v1/knowledge-bases", e.tok, map[string]any{"name": "Support",
		"texts": []any{map[string]any{"title": "Hours", "content": "We open at nine on weekdays."}},
		"urls":  []any{"https://example.com/faq"}})
	testkit.Expect(t, r, 201)
	id := r.Data()["id"].(string)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("files", "returns.txt")
	if err != nil {
		t.Fatal(err)
	}
	part.Write([]byte("Refunds go back to the original payment method within five business days."))
	mw.Close()
	req, err := http.NewRequest("POST", e.URL+"/api/v1/knowledge-bases/"+id+"/sources/add", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.tok)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("adding a file: %d", resp.StatusCode)
	}
	return id
}

// kbRecord checks knowledge-bases.md's record against the real one.
func kbRecord(e *docEnv, t *testing.T, reqs []docRequest) {
	id := e.docKnowledgeBase(t)
	r := e.Do("GET", "/api/v1/knowledge-bases/"+id, e.tok, nil)
	testkit.Expect(t, r, 200)
	expectShape(t, reqs[0].body, r, true)
}

// kbEmbeddings checks knowledge-bases.md's embeddings member against a record's while
// the workspace has an embeddings provider (the doc's model; the provider is never
// reached here), which is cleared again after.
func kbEmbeddings(e *docEnv, t *testing.T, reqs []docRequest) {
	ws := "/api/v1/workspaces/" + e.ids["ws"]
	set := func(base, model any) {
		t.Helper()
		body := map[string]any{"embeddings": map[string]any{"base_url": base, "model": model, "api_key": nil}}
		testkit.Expect(t, e.Do("PUT", ws, e.tok, body), 200)
	}
	set("https://api.openai.com/v1", "text-embedding-3-small")
	defer set(nil, nil)
	id := e.docKnowledgeBase(t)
	r := e.Do("GET", "/api/v1/knowledge-bases/"+id, e.tok, nil)
	testkit.Expect(t, r, 200)
	expectMember(t, reqs[0].body.(map[string]any)["embeddings"], r, true, "data", "embeddings")
}

// kbQuery checks knowledge-bases.md's query answer against the query the doc shows,
// without its similarity_threshold of 0.4: the doc's answer is found with embeddings
// ("evidence": "both"), and this lexical-only score of a three-source base is under it.
func kbQuery(e *docEnv, t *testing.T, reqs []docRequest) {
	id := e.docKnowledgeBase(t)
	r := e.Do("POST", "/api/v1/knowledge-bases/"+id+"/query", e.tok,
		map[string]any{"query": "how long do refunds take", "chunks_to_retrieve": 3})
	testkit.Expect(t, r, 200)
	expectShape(t, reqs[0].body, r, true)
}
