package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// answeredBodies validates every JSON answer of the test binary's servers against the
// schema its operation's documented status gives it in the OpenAPI document, so that a
// client generated from the document reads what the server sends: every test's requests
// count, on every route they reach, successes and errors alike (the status itself is
// servedStatuses' check).
type answeredBodies struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema // by JSON pointer into the document
	// faults keeps the first misfit of each operation and status, to report it.
	faults map[servedKey]string
}

const answeredDocURL = "https://voiceapi.invalid/openapi.json"

func newAnsweredBodies(doc []byte) (*answeredBodies, error) {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	res, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(answeredDocURL, res); err != nil {
		return nil, err
	}
	return &answeredBodies{doc: d, compiler: c, schemas: map[string]*jsonschema.Schema{}, faults: map[servedKey]string{}}, nil
}

// record is the server's testHookAnswered.
func (a *answeredBodies) record(r *http.Request, route string, status int, header http.Header, body []byte, truncated bool) {
	if route == "unmatched" || route == "console" || r.Method == http.MethodHead || truncated {
		return
	}
	if header.Get("Idempotent-Replayed") == "true" {
		return // a kept answer, checked when it was first served (or planted by a test)
	}
	k := servedKey{r.Method, route, status}
	mt, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	var fault string
	switch {
	case len(body) == 0 && (mt == "" || mt == "application/json"):
		// The body of a JSON answer (or one with no type) is kept whole: none came.
		if a.describesContent(k) {
			fault = "no body, where the document describes one"
		}
	default:
		// The server keeps the body of a JSON answer (or one with no type yet) only: a
		// stream's or a download's type is checked without it.
		if fault = a.checkMediaType(k, mt); fault == "" && mt == "application/json" {
			fault = a.check(k, body)
		}
	}
	if fault != "" {
		a.mu.Lock()
		if _, seen := a.faults[k]; !seen {
			a.faults[k] = fmt.Sprintf("%s %s answered %d with a body that does not match its schema (%s %s): %s\n\t\t%.600s",
				k.method, k.route, k.status, r.Method, r.URL.RequestURI(), fault, body)
		}
		a.mu.Unlock()
	}
}

// checkMediaType returns why an answer of media type mt (its Content-Type's, "" for none)
// is not one k's documented answer lists, or "": a JSON body sent as another type (or
// with none) would otherwise pass unchecked. A status not documented, or documented with
// no content, is left to servedStatuses and check.
func (a *answeredBodies) checkMediaType(k servedKey, mt string) string {
	resp, _, ok := a.response(k)
	content, _ := resp["content"].(map[string]any)
	if !ok || len(content) == 0 {
		return ""
	}
	listed := make([]string, 0, len(content))
	for m := range content {
		listed = append(listed, m)
		documented, _, _ := mime.ParseMediaType(m) // "text/plain; version=0.0.4" is text/plain
		if documented == mt || documented == "*/*" || strings.HasSuffix(documented, "/*") && strings.HasPrefix(mt, strings.TrimSuffix(documented, "*")) {
			return ""
		}
	}
	slices.Sort(listed)
	return fmt.Sprintf("Content-Type %q, where the document lists %s", mt, strings.Join(listed, ", "))
}

// describesContent reports whether k's documented answer has a body.
func (a *answeredBodies) describesContent(k servedKey) bool {
	resp, _, ok := a.response(k)
	content, _ := resp["content"].(map[string]any)
	return ok && len(content) > 0
}

// check returns why body does not fit the schema of k's documented answer, or "".
func (a *answeredBodies) check(k servedKey, body []byte) string {
	ptr, ok := a.schemaPointer(k)
	if !ok {
		return "" // the status is not documented: servedStatuses reports that
	}
	if ptr == "" {
		return "the document describes no JSON body for this answer"
	}
	a.mu.Lock()
	s, ok := a.schemas[ptr]
	if !ok {
		var err error
		if s, err = a.compiler.Compile(answeredDocURL + "#" + ptr); err != nil {
			a.mu.Unlock()
			return "compiling " + ptr + ": " + err.Error()
		}
		a.schemas[ptr] = s
	}
	a.mu.Unlock()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return "not JSON: " + err.Error()
	}
	if err := s.Validate(v); err != nil {
		return strings.ReplaceAll(err.Error(), "\n", "\n\t\t")
	}
	return ""
}

// schemaPointer finds the JSON pointer of the application/json schema of k's answer in
// the document, following a response's $ref; ok is false when the status is not listed,
// and the pointer empty when the answer has no JSON body.
func (a *answeredBodies) schemaPointer(k servedKey) (ptr string, ok bool) {
	resp, ptr, ok := a.response(k)
	if !ok {
		return "", false
	}
	content, _ := resp["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	if _, hasJSON := media["schema"]; !hasJSON {
		return "", true
	}
	return ptr + "/content/application~1json/schema", true
}

// response finds k's documented answer in the document, following its $ref, with its
// JSON pointer; ok is false when the status is not listed.
func (a *answeredBodies) response(k servedKey) (resp map[string]any, ptr string, ok bool) {
	paths, _ := a.doc["paths"].(map[string]any)
	op, _ := paths[k.route].(map[string]any)[strings.ToLower(k.method)].(map[string]any)
	responses, _ := op["responses"].(map[string]any)
	code := strconv.Itoa(k.status)
	for _, key := range []string{code, code[:1] + "XX", "default"} {
		resp, found := responses[key].(map[string]any)
		if !found {
			continue
		}
		ptr = "/paths/" + escapePointer(k.route) + "/" + strings.ToLower(k.method) + "/responses/" + key
		if ref, isRef := resp["$ref"].(string); isRef {
			name := strings.TrimPrefix(ref, "#/components/responses/")
			resp, _ = a.doc["components"].(map[string]any)["responses"].(map[string]any)[name].(map[string]any)
			ptr = "/components/responses/" + escapePointer(name)
		}
		return resp, ptr, true
	}
	return nil, "", false
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// misfits lists, sorted, the answers that did not fit their schema.
func (a *answeredBodies) misfits() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.faults))
	for _, f := range a.faults {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// TestAnsweredBodiesChecked checks the check TestMain makes: a body that fits its
// operation's schema passes; one missing a required member, one with a member of the
// wrong type, an error of another shape, a JSON body where the document describes
// none, a body of a media type the document does not list (here none: it would
// have gone unchecked), and no body where the document describes one, are each reported
// once with the request; no body where it describes none passes; streams and unlisted
// statuses are left to others.
func TestAnsweredBodiesChecked(t *testing.T) {
	doc, _ := openapiDocument(t)
	a, err := newAnsweredBodies(doc)
	if err != nil {
		t.Fatal(err)
	}
	req := func(method, url string) *http.Request {
		r, err := http.NewRequest(method, "http://example.test"+url, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	meta := `"meta":{"per_page":15,"next_cursor":null,"prev_cursor":null}`
	a.record(req("GET", "/api/v1/agents"), "/api/v1/agents", 200, jsonHeader, []byte(`{"data":[],`+meta+`}`), false)
	a.record(req("GET", "/api/v1/agents?x"), "/api/v1/agents", 200, jsonHeader, []byte(`{"data":[]}`), false)
	a.record(req("GET", "/api/v1/agents?y"), "/api/v1/agents", 200, jsonHeader, []byte(`{"data":[]}`), false)
	a.record(req("GET", "/api/v1/agents/agt_1"), "/api/v1/agents/{agent_id}", 404, jsonHeader,
		[]byte(`{"message":"Agent not found.","code":"not_found"}`), false)
	a.record(req("DELETE", "/api/v1/agents/agt_1"), "/api/v1/agents/{agent_id}", 404, jsonHeader,
		[]byte(`{"message":"Agent not found.","code":404}`), false)
	a.record(req("DELETE", "/api/v1/agents/agt_2"), "/api/v1/agents/{agent_id}", 204, jsonHeader, []byte(`{}`), false)
	a.record(req("GET", "/api/v1/agents/agt_1"), "/api/v1/agents/{agent_id}", 418, jsonHeader, []byte(`{}`), false)
	a.record(req("GET", "/api/v1/events/stream"), "/api/v1/events/stream", 200,
		http.Header{"Content-Type": {"text/event-stream"}}, []byte("event: x\n\n"), false)
	a.record(req("GET", "/api/v1/agents/agt_3"), "/api/v1/agents/{agent_id}", 200, http.Header{}, []byte(`{"id":"agt_3"}`), false)
	a.record(req("GET", "/api/v1/knowledge-bases/kb_4"), "/api/v1/knowledge-bases/{knowledge_base_id}", 200, jsonHeader, nil, false)
	a.record(req("DELETE", "/api/v1/agents/agt_5"), "/api/v1/agents/{agent_id}", 204, http.Header{}, nil, false)
	a.record(req("DELETE", "/api/v1/agents/agt_6"), "/api/v1/agents/{agent_id}", 204, jsonHeader, nil, false)
	got := a.misfits()
	want := []string{
		"DELETE /api/v1/agents/{agent_id} answered 204 with a body that does not match its schema (DELETE /api/v1/agents/agt_2): the document describes no JSON body",
		"DELETE /api/v1/agents/{agent_id} answered 404 with a body that does not match its schema (DELETE /api/v1/agents/agt_1)",
		"GET /api/v1/agents answered 200 with a body that does not match its schema (GET /api/v1/agents?x)",
		"GET /api/v1/agents/{agent_id} answered 200 with a body that does not match its schema (GET /api/v1/agents/agt_3): Content-Type \"\", where the document lists application/json",
		"GET /api/v1/knowledge-bases/{knowledge_base_id} answered 200 with a body that does not match its schema (GET /api/v1/knowledge-bases/kb_4): no body, where the document describes one",
	}
	if len(got) != len(want) {
		t.Fatalf("reported %d misfits, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("misfit %d:\n%s\nwant it to start with\n%s", i, got[i], want[i])
		}
	}
	if !strings.Contains(got[2], "meta") {
		t.Errorf("the list's misfit does not name the missing meta: %s", got[2])
	}
}
