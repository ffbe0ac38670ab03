package server_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestEveryRouteByIdHidesAnotherWorkspacesRecords is the attacker's walk of conventions
// §2 and §6 over every operation of the OpenAPI document whose path names a record, reads
// included: a user of another workspace, no member of this one, sends each route the
// request a permitted caller would have had accepted, with this workspace's ids; and sends
// it again with ids of the same shape that name nothing. The two answers must be the same
// refusal (status and code: no existence oracle), 404 wherever the route looks its record
// up, and the store must be byte for byte what it was.
func TestEveryRouteByIdHidesAnotherWorkspacesRecords(t *testing.T) {
	w := newRefusalWorkspace(t)
	_, doc := openapiDocument(t)
	outsider := w.User(t, "attacker@example.com")
	tok := w.Token(t, &data.User{ID: outsider.ID}, outsider.PersonalWorkspaceID)
	watch := watchStore(t, w.Store)
	n := 0
	for _, op := range documentedOps(t) {
		params := pathParam.FindAllString(op.path, -1)
		if len(params) == 0 {
			continue
		}
		var body any
		if op.jsonBody {
			media := dig(t, doc, "paths", op.path, strings.ToLower(op.method), "requestBody", "content").(map[string]any)
			example, _ := media["application/json"].(map[string]any)["example"].(map[string]any)
			body = w.validBody(op, example)
		}
		real := w.do(op.method, w.path(op.path, "", ""), tok, body)
		if real.Status != 404 && real.Status != 403 {
			t.Errorf("%s %s with this workspace's ids, as an outsider: %d %s", op.method, op.path, real.Status, real.Body)
			continue
		}
		for _, p := range params {
			name := strings.Trim(p, "{}")
			none := w.do(op.method, w.path(op.path, name, missing(name, w.ids[name])), tok, body)
			if none.Status != real.Status || none.Code() != real.Code() {
				t.Errorf("%s %s: an outsider tells this workspace's %s (%d %s) from one that names nothing (%d %s)",
					op.method, op.path, name, real.Status, real.Code(), none.Status, none.Code())
			}
		}
		n++
	}
	t.Logf("%d routes by id walked", n)
	if n < 60 {
		t.Errorf("only %d routes by id walked", n)
	}
	if diff := watch.changed(t, 10); len(diff) > 0 {
		t.Errorf("an outsider's requests changed the store:\n%s", strings.Join(diff, "\n"))
	}
}
