package server_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// The export document's examples: export-import.md's document is checked against a real
// export of a workspace holding each kind of record it shows, and sent to an import.

// exportDocument checks export-import.md's document against the export of a workspace
// the document itself was imported into: every member the export writes must be in the
// document, every member of the document in the export.
func exportDocument(e *docEnv, t *testing.T, reqs []docRequest) {
	ws, tok, _ := e.importDoc(t)
	r := e.Do("GET", "/api/v1/workspaces/"+ws+"/export", tok, nil)
	testkit.Expect(t, r, 200)
	expectShape(t, reqs[0].body, r, true)
}

// importDocument checks export-import.md's import answer against the import of its
// document.
func importDocument(e *docEnv, t *testing.T, reqs []docRequest) {
	_, _, r := e.importDoc(t)
	expectShape(t, reqs[0].body, r, true)
}

// importDoc imports export-import.md's document into a new workspace and returns it,
// a token in it and the answer. Two elisions of the document are filled in: a version's
// groups shown as {"…": "…"} are the agent's own (the version is what was published),
// and the one file, truncated ("JVBERi0xLjQK…", its sha256 for show), is sent as the
// bytes its visible base64 holds, "%PDF-1.4\n", with their sha256.
func (e *docEnv) importDoc(t *testing.T) (ws, tok string, r *testkit.Response) {
	t.Helper()
	// Once per env: the document's phone number can be registered only once.
	if e.imported != nil {
		return e.imported.ws, e.imported.tok, e.imported.answer
	}
	r = e.Do("POST", "/api/v1/workspaces", e.tok, map[string]any{"name": "Acme support"})
	testkit.Expect(t, r, 201)
	ws = r.Data()["id"].(string)
	tok = e.Server.TokenIn(e.Owner, ws)
	doc := docJSON(t, e.block(t, "export-import.md#1"))[0].body.(map[string]any)
	for _, a := range doc["agents"].([]any) {
		agent := a.(map[string]any)
		for _, v := range agent["versions"].([]any) {
			version := v.(map[string]any)
			for k, group := range version {
				if g, ok := group.(map[string]any); ok && len(g) == 1 && g[ellipsis] == ellipsis {
					version[k] = agent[k]
				}
			}
		}
	}
	for _, kb := range doc["knowledge_bases"].([]any) {
		for _, f := range kb.(map[string]any)["files"].([]any) {
			file := f.(map[string]any)
			visible := strings.TrimSuffix(file["content_base64"].(string), ellipsis)
			raw, err := base64.StdEncoding.DecodeString(visible)
			if err != nil {
				t.Fatalf("the document's file: %v", err)
			}
			sum := sha256.Sum256(raw)
			file["content_base64"], file["sha256"] = visible, hex.EncodeToString(sum[:])
		}
	}
	r = e.Do("POST", "/api/v1/workspaces/"+ws+"/import", tok, stripElided(doc))
	testkit.Expect(t, r, 201)
	e.imported = &importedDoc{ws, tok, r}
	return ws, tok, r
}

// importedDoc is the import importDoc made.
type importedDoc struct {
	ws, tok string
	answer  *testkit.Response
}
