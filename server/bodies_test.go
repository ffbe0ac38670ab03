package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/service"
)

// documentedOp is one operation of the OpenAPI document: the route table as the server
// publishes it.
type documentedOp struct {
	method, path string
	jsonBody     bool // it documents an application/json request body
}

// documentedOps lists every operation of the served OpenAPI document, sorted.
func documentedOps(t *testing.T) []documentedOp {
	t.Helper()
	_, doc := openapiDocument(t)
	var ops []documentedOp
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			o, ok := op.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			rb, _ := o["requestBody"].(map[string]any)
			content, _ := rb["content"].(map[string]any)
			_, hasJSON := content["application/json"]
			if rb != nil && content == nil {
				t.Fatalf("%s %s: a request body without content: %v", method, path, rb)
			}
			ops = append(ops, documentedOp{strings.ToUpper(method), path, hasJSON})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].method+ops[i].path < ops[j].method+ops[j].path })
	return ops
}

var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

// fill puts ids into a path template: the caller's workspace for {workspace_id} (so that
// authorization lets the request through), and ids of nothing for the others.
func fill(path, workspaceID string) string {
	return pathParam.ReplaceAllStringFunc(path, func(p string) string {
		switch p {
		case "{workspace_id}":
			return workspaceID
		case "{version_number}", "{other}":
			return "1"
		}
		return "x_none"
	})
}

// duplicateMemberBodies give a member twice: at the top, in a nested object, and in a
// list's object; path is where the 422 must name it.
var duplicateMemberBodies = []struct{ body, path string }{
	{`{"name":"a","name":"b"}`, "name"},
	{` {"name":"a", "zz":{"k":1,"k":[2]}} `, "zz.k"},
	{`{"llm_config":{"tools":[{"name":"x"},{"name":"x","name":"y"}]}}`, "llm_config.tools.1.name"},
}

// namesGivenTwice reports whether the 422 r names path as given more than once.
func namesGivenTwice(r *response, path string) bool {
	msgs, _ := r.FieldErrors()[path].([]any)
	return slices.ContainsFunc(msgs, func(m any) bool { return strings.Contains(m.(string), "more than once") })
}

// TestDuplicateMemberRefusedOnEveryRoute sends, to every route that takes a JSON body, a
// body giving a member name twice at the top and one giving it twice in a nested object:
// each is a 422 naming the path (RFC 7493 I-JSON), not the last one silently winning.
func TestDuplicateMemberRefusedOnEveryRoute(t *testing.T) {
	e := newEnv(t)
	n := 0
	for _, op := range documentedOps(t) {
		if !op.jsonBody {
			continue
		}
		n++
		for _, c := range duplicateMemberBodies {
			r := e.do(op.method, fill(op.path, e.Owner.WorkspaceID), e.Owner.Token, c.body)
			expect(t, r, 422)
			if !namesGivenTwice(r, c.path) {
				t.Errorf("%s %s %s: 422 does not name %s as given twice: %s", op.method, op.path, c.body, c.path, r.Body)
			}
		}
	}
	if n < 15 {
		t.Fatalf("only %d routes take a JSON body: the document was not read", n)
	}
}

// TestDuplicateMemberChangesNothing: a create and an update with a duplicated name store
// nothing and change nothing.
func TestDuplicateMemberChangesNothing(t *testing.T) {
	e := newEnv(t)
	expect(t, e.do("POST", "/api/v1/agents", e.Owner.Token, `{"name":"a","name":"b"}`), 422)
	if l := e.do("GET", "/api/v1/agents", e.Owner.Token, nil).List(); len(l) != 0 {
		t.Fatalf("a refused create stored %d agents", len(l))
	}
	r := e.do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "kept"})
	expect(t, r, 201)
	id, etag := r.Data()["id"].(string), r.Header.Get("ETag")
	expect(t, e.do("PUT", "/api/v1/agents/"+id, e.Owner.Token, `{"prompt_config":{"prompt":"x","prompt":"y"}}`), 422)
	if got := e.do("GET", "/api/v1/agents/"+id, e.Owner.Token, nil); got.Header.Get("ETag") != etag {
		t.Fatal("a refused update changed the agent")
	}
}

// noBodyActions are the documented POSTs that take no request body.
func noBodyActions(t *testing.T) []documentedOp {
	var out []documentedOp
	for _, op := range documentedOps(t) {
		if op.method == http.MethodPost && !op.jsonBody {
			out = append(out, op)
		}
	}
	return out
}

// TestNoBodyActionsRefuseBodies: every POST that takes no body refuses one that is not
// empty or {} (400, or 415 without a JSON Content-Type) before it acts, in the error
// shape; an empty body, white space and {} reach the action (a 404 here: the ids name
// nothing).
func TestNoBodyActionsRefuseBodies(t *testing.T) {
	e := newEnv(t)
	actions := noBodyActions(t)
	var paths []string
	for _, op := range actions {
		paths = append(paths, op.path)
	}
	for _, want := range []string{"/restore", "/test", "/rotate-secret", "/retry", "/refetch", "/logout"} {
		if !slices.ContainsFunc(paths, func(p string) bool { return strings.HasSuffix(p, want) }) {
			t.Fatalf("no documented body-less action ends in %s: %v", want, paths)
		}
	}
	for _, op := range actions {
		if strings.HasSuffix(op.path, "/logout") {
			continue // it acts on the calling token: tried below with a token of its own
		}
		path := fill(op.path, e.Owner.WorkspaceID)
		for _, c := range []struct {
			body        string
			contentType string
			status      int
		}{
			{`{"confirm":true}`, "application/json", 400},
			{`{"a":1,"a":1}`, "application/json", 400},
			{`[]`, "application/json", 400},
			{`{`, "application/json", 400},
			{`null`, "application/json", 400},
			{"{}x", "application/json", 400},
			{strings.Repeat(" ", 2000) + "{}", "application/json", 400},
			{`{}`, "text/plain", 415},
			{`rotate please`, "", 415},
			{`{}`, "application/json", 404},
			{" { \n\t} ", "application/json; charset=utf-8", 404},
			{"  \n", "application/json", 404},
			{"", "", 404},
		} {
			r := e.do(op.method, path, e.Owner.Token, c.body, "Content-Type", c.contentType)
			if r.Status != c.status {
				t.Errorf("%s %s body %q (%s): status %d, want %d: %s", op.method, op.path, c.body, c.contentType, r.Status, c.status, r.Body)
				continue
			}
			expect(t, r, c.status)
		}
	}
	// Logout with a body other than {} keeps the token; with {} it revokes it.
	tok := e.tokenIn(e.Owner, e.Owner.WorkspaceID)
	expect(t, e.do("POST", "/api/v1/auth/logout", tok, `{"all":true}`), 400)
	expect(t, e.do("GET", "/api/v1/webhooks", tok, nil), 200)
	expect(t, e.do("POST", "/api/v1/auth/logout", tok, `{}`), 204)
	expect(t, e.do("GET", "/api/v1/webhooks", tok, nil), 401)
}

// TestRefusedRotateSecretDoesNotRotate: the stored secret is byte for byte the same after
// refused rotations, and changes after one sent with {}.
func TestRefusedRotateSecretDoesNotRotate(t *testing.T) {
	e := newEnv(t)
	id, _ := createWebhook(t, e, e.Owner.Token, "https://example.com/hook", "*")
	row := func() string {
		var v []byte
		e.DB.View(context.Background(), func(tx service.Tx) error {
			w, err := tx.Webhook(id)
			if w != nil {
				v, err = json.Marshal(w)
			}
			return err
		})
		if len(v) == 0 {
			t.Fatal("webhook row not found")
		}
		return string(v)
	}
	before := row()
	path := "/api/v1/webhooks/" + id + "/rotate-secret"
	expect(t, e.do("POST", path, e.Owner.Token, `{"secret":"mine"}`), 400)
	expect(t, e.do("POST", path, e.Owner.Token, `{}`, "Content-Type", "text/plain"), 415)
	if row() != before {
		t.Fatal("a refused rotate-secret changed the webhook")
	}
	r := e.do("POST", path, e.Owner.Token, " {} ")
	expect(t, r, 200)
	if s, _ := r.JSON()["secret"].(string); !strings.HasPrefix(s, "whsec_") || row() == before {
		t.Fatalf("rotation with {} did not rotate: %s", r.Body)
	}
	expect(t, e.do("POST", path, e.Owner.Token, nil), 200)
}
