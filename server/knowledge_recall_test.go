package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestKnowledgeRecallThroughTheAPI uploads the fixture corpus of knowledge/testdata as files
// and asks its questions through the query endpoint: the document holding each answer must
// be among the top 3 chunks for at least 80% of them (the recall@3 target), end to
// end through detection, extraction, chunking, storage and the index rebuilt from storage.
func TestKnowledgeRecallThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	id := e.createKB(tok, map[string]any{"name": "Corpus"})["id"].(string)
	dir := filepath.Join("..", "knowledge", "testdata", "corpus")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var parts []part
	for _, ent := range entries {
		b, err := os.ReadFile(filepath.Join(dir, ent.Name()))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, part{"files", ent.Name(), b})
	}
	r := e.addParts(tok, id, parts...)
	expect(t, r, 200)
	docOf := map[string]string{} // source id → filename
	for _, f := range items(r.Data(), "files") {
		if f["status"] != "indexed" {
			t.Fatalf("%v not indexed: %v", f["filename"], f["error"])
		}
		docOf[f["id"].(string)] = f["filename"].(string)
	}
	raw, err := os.ReadFile(filepath.Join("..", "knowledge", "testdata", "questions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []struct{ Question, Document string }
	if err := json.Unmarshal(raw, &qs); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, q := range qs {
		r := e.do("POST", "/api/v1/knowledge-bases/"+id+"/query", tok, map[string]any{"query": q.Question, "chunks_to_retrieve": 3})
		expect(t, r, 200)
		for _, h := range r.List() {
			if docOf[h.(map[string]any)["source_id"].(string)] == q.Document {
				found++
				break
			}
		}
	}
	recall := float64(found) / float64(len(qs))
	t.Logf("recall@3 through the API = %.3f (%d/%d questions, %d documents)", recall, found, len(qs), len(entries))
	if len(entries) < 20 || len(qs) < 20 || recall < 0.8 {
		t.Errorf("recall@3 = %.3f over %d documents and %d questions; want ≥ 0.8 over 20+ of each", recall, len(entries), len(qs))
	}
}
