package server_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// refusal is one bad request: the route, what is bad about it (kind, and the property
// when one is), and what the answer must be: want (0: any 4xx), and on a 422 the
// property named among its errors.
type refusal struct {
	op          documentedOp
	kind, field string
	path, token string
	body        any
	headers     []string
	want        int
}

func (r refusal) String() string {
	s := fmt.Sprintf("%s %s [%s", r.op.method, r.path, r.kind)
	if r.field != "" {
		s += " " + r.field
	}
	return s + "]"
}

// TestEveryRefusedWriteChangesNothing sends every route that writes (each POST, PUT,
// PATCH and DELETE of the OpenAPI document) the bad requests derived from the document:
// a body that is no JSON, JSON but no object, of another media type, a malformed
// multipart body; an unknown member; each property of the request schema (and of its
// objects, and of a list's first object) of a wrong type, null, one past its bounds,
// outside its enum, of a wrong format, missing when required, or naming a record of
// another workspace, on a body the route would otherwise take; a stale If-Match; each
// path id naming nothing, or a record of another workspace. A route that honours
// Idempotency-Key gets one each time. Each answer is a 4xx in the error shape
// (conventions §2), and the whole store (storeDump: every record, index, event, outbox
// entry, delivery, job, kept idempotent response and file) is byte for byte what it was
// before: a refused write changes nothing. The one refusal the docs record is a refused
// login of an existing account (user.login_failed, docs/webhooks.md).
func TestEveryRefusedWriteChangesNothing(t *testing.T) {
	started := time.Now()
	w := newRefusalWorkspace(t)
	_, doc := openapiDocument(t)
	var cases []refusal
	idempotent := map[documentedOp]bool{}
	for _, op := range documentedOps(t) {
		if isWrite(op.method) {
			cases = append(cases, w.refusalsOf(t, doc, op)...)
			idempotent[op] = takesParameter(t, doc, op, "IdempotencyKey")
		}
	}
	t.Logf("workspace built in %s; %d bad requests", time.Since(started).Round(time.Millisecond), len(cases))
	coverage, kinds, documented := map[string]map[string]bool{}, map[string]int{}, 0
	watch := watchStore(t, w.Store)
	for i, c := range cases {
		if idempotent[c.op] && !slices.Contains(c.headers, "Idempotency-Key") {
			// Only successful responses are kept (docs/api.md): a refusal keeps nothing.
			c.headers = append(c.headers, "Idempotency-Key", fmt.Sprintf("refused-%d", i))
		}
		res := w.do(c.op.method, c.path, c.token, c.body, c.headers...)
		if err := checkRefusal(c, res); err != nil {
			t.Errorf("%s: %v", c, err)
		}
		if changed := watch.changed(t, 8); len(changed) > 0 {
			if !w.documentedChange(t, c, changed) {
				t.Errorf("%s (%d) changed the store: %v", c, res.Status, changed)
			} else {
				documented++
			}
		}
		route := c.op.method + " " + c.op.path
		if coverage[route] == nil {
			coverage[route] = map[string]bool{}
		}
		coverage[route][c.kind] = true
		kinds[kindOf(c.kind)]++
	}
	t.Logf("bad requests by kind: %v", kinds)
	checkCoverage(t, doc, coverage)
	t.Logf("%d bad requests to %d write routes in %s (%d dumps of the store); %d recorded a refused login", len(cases), len(coverage), time.Since(started).Round(time.Millisecond), watch.dumps, documented)
}

// kindOf groups the kinds named after their path parameter ("missing agent_id").
func kindOf(kind string) string {
	if strings.HasPrefix(kind, "missing ") {
		return "missing id"
	}
	return kind
}

func isWrite(method string) bool {
	return slices.Contains([]string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}, method)
}

// checkRefusal checks the answer is the refusal c wants, in the error shape.
func checkRefusal(c refusal, res *response) error {
	if res.Status < 400 || res.Status >= 500 || c.want != 0 && res.Status != c.want {
		want := "a 4xx"
		if c.want != 0 {
			want = fmt.Sprint(c.want)
		}
		return fmt.Errorf("status %d, want %s: %.300s", res.Status, want, res.Body)
	}
	var body struct {
		Message string          `json:"message"`
		Code    string          `json:"code"`
		Errors  json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(res.Body, &body); err != nil || body.Message == "" || body.Code == "" || res.Header.Get("X-Request-Id") == "" {
		return fmt.Errorf("%d is not in the error shape: %.300s", res.Status, res.Body)
	}
	if (len(body.Errors) > 0) != (res.Status == 422) {
		return fmt.Errorf("%d with errors %s: only a 422 names fields", res.Status, body.Errors)
	}
	if c.field == "" || c.want != 422 {
		return nil
	}
	var fields map[string]any
	json.Unmarshal(body.Errors, &fields)
	if c.kind == "unknown member" && len(fields) != 1 {
		// The rest of the body is the valid one the other kinds start from.
		return fmt.Errorf("the valid body is not: %s", body.Errors)
	}
	for name := range fields {
		if name == c.field || strings.HasPrefix(name, c.field+".") {
			return nil
		}
		if strings.Contains(name, ".") && strings.HasPrefix(c.field, name+".") {
			// What holds a nested bad value is refused whole (a choice list where no
			// choices are allowed): the bad value is named by its container.
			return nil
		}
	}
	return fmt.Errorf("the 422 does not name %s: %s", c.field, body.Errors)
}

// documentedChange reports whether what c changed is what the docs say a refusal
// records: a refused login of an existing account adds user.login_failed to the
// account's personal workspace's log (docs/webhooks.md), with its outbox entry, and
// nothing else.
func (w *refusalWorkspace) documentedChange(t *testing.T, c refusal, changed []string) bool {
	if c.op.path != "/api/v1/auth/login" {
		return false
	}
	for _, name := range changed {
		table, _, _ := strings.Cut(strings.Fields(name)[1], "/")
		if !slices.Contains([]string{"events", "events_by_ws", "events_by_facet", "events_by_time", "event_heads", "event_clocks", "outbox"}, table) {
			return false
		}
	}
	log := w.do("GET", "/api/v1/audit-log?per_page=1", w.Owner.Token, nil)
	expect(t, log, 200)
	return log.List()[0].(map[string]any)["type"] == data.EventUserLoginFailed
}

// refusalsOf derives op's bad requests.
func (w *refusalWorkspace) refusalsOf(t *testing.T, doc map[string]any, op documentedOp) []refusal {
	t.Helper()
	tok := w.Owner.Token
	if op.path == "/api/v1/auth/logout" {
		tok = w.logout
	} else if op.path == "/api/v1/auth/login" {
		tok = ""
	}
	valid := w.path(op.path, "", "")
	var out []refusal
	body := any(nil)
	if op.jsonBody {
		media := dig(t, doc, "paths", op.path, strings.ToLower(op.method), "requestBody", "content").(map[string]any)
		content := media["application/json"].(map[string]any)
		if media["multipart/form-data"] != nil {
			out = append(out, refusal{op: op, kind: "malformed multipart", path: valid, token: tok, body: "--x\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nphone_number",
				headers: []string{"Content-Type", "multipart/form-data; boundary=x"}, want: 400})
		}
		example, _ := content["example"].(map[string]any)
		base := w.validBody(op, example)
		body = base
		schemas := dig(t, doc, "components", "schemas").(map[string]any)
		out = append(out, w.bodyRefusals(op, tok, valid, schemas, content, base)...)
	} else if op.method == http.MethodPost {
		for _, c := range []struct{ kind, body string }{{"malformed JSON", `{"confirm":`}, {"JSON array", `[]`}, {"unknown member", `{"confirm":true}`}} {
			out = append(out, refusal{op: op, kind: c.kind, path: valid, token: tok, body: c.body, want: 400})
		}
	}
	if op.path == "/api/v1/auth/login" {
		// The refusal the docs record: a wrong password for an existing account.
		out = append(out, refusal{op: op, kind: "wrong password", path: valid, body: with(body.(map[string]any), "password", "not the password"), want: 422})
	}
	if takesParameter(t, doc, op, "IdempotencyKey") {
		out = append(out, refusal{op: op, kind: "Idempotency-Key too long", field: "Idempotency-Key", path: valid, token: tok, body: body,
			headers: []string{"Idempotency-Key", strings.Repeat("k", data.MaxIdempotencyKey+1)}, want: 422})
	}
	if takesParameter(t, doc, op, "IfMatch") {
		out = append(out, refusal{op: op, kind: "stale If-Match", path: valid, token: tok, body: body, headers: []string{"If-Match", `"stale"`}, want: 412})
	}
	return append(out, w.idRefusals(op, tok, body)...)
}

// takesParameter reports whether op documents the shared parameter name.
func takesParameter(t *testing.T, doc map[string]any, op documentedOp, name string) bool {
	o := dig(t, doc, "paths", op.path, strings.ToLower(op.method)).(map[string]any)
	for _, p := range asList(o["parameters"]) {
		if ref, _ := p.(map[string]any)["$ref"].(string); ref == "#/components/parameters/"+name {
			return true
		}
	}
	return false
}

// bodyRefusals are the bad bodies of a route that takes JSON, sent to valid ids.
func (w *refusalWorkspace) bodyRefusals(op documentedOp, tok, path string, schemas, content, base map[string]any) []refusal {
	out := []refusal{
		{op: op, kind: "malformed JSON", path: path, token: tok, body: `{"name":`, want: 400},
		{op: op, kind: "JSON array", path: path, token: tok, body: `[{}]`, want: 400},
		{op: op, kind: "JSON string", path: path, token: tok, body: `"name"`, want: 400},
		{op: op, kind: "unknown member", field: "zz_unknown", path: path, token: tok, body: with(base, "zz_unknown", 1), want: 422},
		{op: op, kind: "not JSON's media type", path: path, token: tok, body: base, headers: []string{"Content-Type", "text/plain"}, want: 415},
	}
	sd := schemaDoc{schemas}
	schema, _ := content["schema"].(map[string]any)
	for _, c := range sd.propertyCases(schema, base) {
		out = append(out, refusal{op: op, kind: c.bad.kind, field: c.path, path: path, token: tok, body: c.body, want: 422})
	}
	for _, c := range sd.eachProperty(schema, base, w.foreignValues) {
		// A 422 naming the member, or the 404 of a record the caller cannot see.
		out = append(out, refusal{op: op, kind: c.bad.kind, field: c.path, path: path, token: tok, body: c.body})
	}
	return out
}

// idRefusals are op's requests naming, in turn, each path id that names nothing, and a
// record of another workspace, each with the body the route would otherwise take.
func (w *refusalWorkspace) idRefusals(op documentedOp, tok string, body any) []refusal {
	var out []refusal
	params := pathParam.FindAllString(op.path, -1)
	recordParam := false
	for _, p := range params {
		name := strings.Trim(p, "{}")
		out = append(out, refusal{op: op, kind: "missing " + name, path: w.path(op.path, name, missing(name, w.ids[name])), token: tok, body: body, want: 404})
		switch {
		case name == "workspace_id":
			out = append(out, refusal{op: op, kind: "foreign workspace", path: w.path(op.path, name, w.stranger), token: tok, body: body, want: 404})
		case name == "key_id":
			out = append(out, refusal{op: op, kind: "foreign key", path: w.path(op.path, name, w.strangerKey), token: tok, body: body, want: 404})
		case name == "user_id" && strings.HasPrefix(op.path, "/api/v1/workspaces/"):
			out = append(out, refusal{op: op, kind: "user not a member", path: w.path(op.path, name, w.values["outsider"]), token: tok, body: body, want: 404})
		case name != "user_id" && name != "version_number" && name != "source_type":
			recordParam = true
		}
	}
	switch {
	case recordParam:
		// The owner's token bound to the second workspace, where none of the ids is.
		out = append(out, refusal{op: op, kind: "ids of another workspace", path: w.path(op.path, "", ""), token: w.elsewhere, body: body, want: 404})
	case len(params) == 0 && w.refersToRecords(body):
		out = append(out, refusal{op: op, kind: "body ids of another workspace", path: op.path, token: w.elsewhere, body: body})
	}
	return out
}

// refersToRecords reports whether a body names one of the workspace's records.
func (w *refusalWorkspace) refersToRecords(body any) bool {
	m, _ := body.(map[string]any)
	for _, v := range m {
		if s, ok := v.(string); ok && slices.Contains(slices.Collect(maps.Values(w.ids)), s) {
			return true
		}
	}
	return false
}

// checkCoverage fails unless every write route of the document was sent bad requests,
// and every route taking JSON each kind of bad body.
func checkCoverage(t *testing.T, doc map[string]any, coverage map[string]map[string]bool) {
	n := 0
	for _, op := range documentedOps(t) {
		if !isWrite(op.method) {
			continue
		}
		n++
		kinds := coverage[op.method+" "+op.path]
		if len(kinds) == 0 {
			t.Errorf("%s %s: no bad request sent", op.method, op.path)
		}
		for _, k := range []string{"malformed JSON", "JSON array", "unknown member"} {
			if op.jsonBody && !kinds[k] {
				t.Errorf("%s %s: no %s sent", op.method, op.path, k)
			}
		}
	}
	if n < 60 {
		t.Fatalf("only %d write routes in the document", n)
	}
}
