package server_test

import (
	"slices"
	"strings"
	"testing"
)

// TestSpecPublishedDescription holds the served interface description to the spec's
// Versioning and General conventions:
//
//   - "The published interface description carries version 1.0.0" (Versioning 2);
//   - "Every path starts with `/api/v1`" (General conventions 1; Versioning 1), the
//     operator's /healthz, /readyz and /metrics aside (conventions §16);
//   - the spec's endpoint groups ("Authentication, API Keys, Agent, …") are the
//     document's tags, and every tag an operation carries is one the document declares,
//     so a reader (and a generated client) finds each operation in its group.
func TestSpecPublishedDescription(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/api/v1/openapi.json", "", nil)
	expect(t, r, 200)
	doc := r.JSON()
	if v := path(doc, "info.version"); v != "1.0.0" {
		t.Errorf("info.version = %v, want 1.0.0", v)
	}
	operational := []string{"/healthz", "/readyz", "/metrics"}
	for p := range doc["paths"].(map[string]any) {
		if !strings.HasPrefix(p, "/api/v1/") && !slices.Contains(operational, p) {
			t.Errorf("documented path %s does not start with /api/v1", p)
		}
	}

	var declared []string
	for _, tag := range doc["tags"].([]any) {
		declared = append(declared, tag.(map[string]any)["name"].(string))
	}
	for _, group := range []string{"Authentication", "API Keys", "Agent", "Agent Versions", "Call History", "Knowledge Base",
		"Number", "Subscription", "User", "Webhook", "Workspace", "Workspace User"} {
		if !slices.Contains(declared, group) {
			t.Errorf("the spec's endpoint group %q is not a tag of the document (tags: %v)", group, declared)
		}
	}
	for p, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			tags, _ := path(op, "tags").([]any)
			if len(tags) == 0 {
				t.Errorf("%s %s has no tag", method, p)
			}
			for _, tag := range tags {
				if !slices.Contains(declared, tag.(string)) {
					t.Errorf("%s %s is tagged %q, which the document does not declare", method, p, tag)
				}
			}
		}
	}
}
