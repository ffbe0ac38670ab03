package server_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/validate"
)

// TestKnowledgeTextPartBound: a text sent as a multipart part holds MaxTextContent
// characters as a JSON text does, whatever their width: at the bound in four-byte
// characters it is added; one character past it is refused, as a part too large when the
// bytes pass four per character, else as a 422 on its content. Nothing refused is stored.
func TestKnowledgeTextPartBound(t *testing.T) {
	e := newKBEnv(t, kbEnvOptions{})
	tok := e.Owner.Token
	id := e.createKB(tok, map[string]any{"name": "Bounds"})["id"].(string)
	const wide = "😀" // four bytes, one character
	expect(t, e.addParts(tok, id, part{"texts", "", []byte(strings.Repeat(wide, validate.MaxTextContent))}), 200)
	before := e.kb(tok, id)
	if n := len(items(before, "texts")); n != 1 {
		t.Fatalf("%d texts after adding one at the bound", n)
	}
	r := e.addParts(tok, id, part{"texts", "", []byte(strings.Repeat(wide, validate.MaxTextContent+1))})
	expect(t, r, 413)
	if !strings.Contains(r.JSON()["message"].(string), "texts.0") {
		t.Errorf("413 names no part: %s", r.Body)
	}
	expectFields(t, e.addParts(tok, id, part{"texts", "", []byte(strings.Repeat("a", validate.MaxTextContent+1))}), "texts.0.content")
	if n := len(items(e.kb(tok, id), "texts")); n != 1 {
		t.Errorf("%d texts after two refused adds, want 1", n)
	}
}
