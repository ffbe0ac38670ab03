package server_test

import (
	"strings"
	"testing"
)

// TestOpenAPIEveryBodyHasExample walks the document: every request body and every response
// with content (the routes' and the shared error responses) carries an example per media
// type.
func TestOpenAPIEveryBodyHasExample(t *testing.T) {
	_, doc := openapiDocument(t)
	checked := 0
	walkSchemas(doc, "", func(path string, m map[string]any) {
		if !strings.HasSuffix(path, "/requestBody") && !strings.Contains(path, "/responses/") {
			return
		}
		content, ok := m["content"].(map[string]any)
		if !ok {
			return
		}
		for media, mt := range content {
			mm, _ := mt.(map[string]any)
			if _, isSchema := mm["schema"].(map[string]any); !isSchema {
				continue
			}
			if s, _ := mm["schema"].(map[string]any); s["contentMediaType"] != nil {
				continue // raw bytes (a file's content, an export archive): no JSON example
			}
			checked++
			if _, ok := mm["example"]; !ok {
				if _, ok := mm["examples"]; !ok {
					t.Errorf("%s %s: no example", path, media)
				}
			}
		}
	})
	if checked < 90 {
		t.Fatalf("only %d bodies found; the walk is broken", checked)
	}
}

// TestOpenAPIExamplesAccepted sends the document's request examples of a few create routes
// to a real server: each must be accepted as it stands.
func TestOpenAPIExamplesAccepted(t *testing.T) {
	_, doc := openapiDocument(t)
	e := newEnv(t)
	for _, path := range []string{"/api/v1/agents", "/api/v1/numbers", "/api/v1/webhooks", "/api/v1/knowledge-bases"} {
		ex := dig(t, doc, "paths", path, "post", "requestBody", "content", "application/json", "example")
		r := e.do("POST", path, e.Owner.Token, ex)
		if r.Status != 201 {
			t.Errorf("POST %s with the document's example %v: %d %s", path, ex, r.Status, r.Body)
		}
	}
}
