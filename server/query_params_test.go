package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// unknownParam is a typo of agent_id, the parameter conventions §1 is about.
const unknownParam = "agnet_id"

// TestEveryRouteRefusesAnUnknownQueryParameter walks every operation of the OpenAPI
// document, sends it the request it would otherwise take (its valid ids, the owner's
// token, its valid body) with ?agnet_id=x, and expects a 422 in the error shape naming
// agnet_id (conventions §1): on a list a typo of a filter must not widen the list, and
// on a write it must not act (a route honouring Idempotency-Key gets one, and keeps no
// answer under it). The whole store is byte for byte what it was after each.
func TestEveryRouteRefusesAnUnknownQueryParameter(t *testing.T) {
	w := newRefusalWorkspace(t)
	_, doc := openapiDocument(t)
	before := dumpStore(t, w.Store)
	n := 0
	for _, op := range documentedOps(t) {
		tok, body := w.validRequest(t, doc, op)
		path := w.path(op.path, "", "") + "?" + unknownParam + "=x"
		if op.path == "/api/v1/events/stream" {
			// A stream that took the request would never end: HEAD answers with the status alone.
			if head := w.do("HEAD", path, tok, nil); head.Status != 422 {
				t.Errorf("HEAD %s: %d, want 422", path, head.Status)
				continue
			}
		}
		var headers []string
		if takesParameter(t, doc, op, "IdempotencyKey") {
			// A refusal keeps no answer under its key either.
			headers = []string{"Idempotency-Key", fmt.Sprintf("unknown-param-%d", n)}
		}
		res := w.do(op.method, path, tok, body, headers...)
		c := refusal{op: op, kind: "unknown query parameter", field: unknownParam, want: 422}
		if err := checkRefusal(c, res); err != nil {
			t.Errorf("%s %s?%s=x: %v", op.method, op.path, unknownParam, err)
		} else if got := res.FieldErrors()[unknownParam]; !slices.Equal(asStrings(got), []string{"The agnet_id parameter is not a known parameter."}) {
			t.Errorf("%s %s: agnet_id's errors are %v", op.method, op.path, got)
		}
		after := dumpStore(t, w.Store)
		if changed := before.diff(after, 8); len(changed) > 0 {
			t.Errorf("%s %s?%s=x (%d) changed the store: %v", op.method, op.path, unknownParam, res.Status, changed)
		}
		before = after
		n++
	}
	if n < 100 {
		t.Fatalf("only %d operations in the document", n)
	}
}

// TestUnknownQueryParameterReportedWithTheOtherFaults: the 422 names every fault of the
// request at once (conventions §2): on every list, the unknown parameter and a cursor
// that storage refuses; on every route taking JSON, the unknown parameter and an unknown
// member of the body; on the calls list, with a bad filter and a bad per_page.
func TestUnknownQueryParameterReportedWithTheOtherFaults(t *testing.T) {
	w := newRefusalWorkspace(t)
	_, doc := openapiDocument(t)
	before := dumpStore(t, w.Store)
	lists, bodies := 0, 0
	for _, op := range documentedOps(t) {
		tok, body := w.validRequest(t, doc, op)
		path := w.path(op.path, "", "") + "?" + unknownParam + "=x"
		switch {
		case op.method == http.MethodGet && takesParameter(t, doc, op, "Cursor"):
			lists++
			expectFaults(t, w.do("GET", path+"&cursor=bm90LWEtY3Vyc29y", tok, nil), op, unknownParam, "cursor")
		case op.jsonBody:
			bodies++
			expectFaults(t, w.do(op.method, path, tok, with(body.(map[string]any), "zz_unknown", 1)), op, unknownParam, "zz_unknown")
		}
	}
	if changed := before.diff(dumpStore(t, w.Store), 8); len(changed) > 0 {
		t.Errorf("the refused requests changed the store: %v", changed)
	}
	if lists < 15 || bodies < 30 {
		t.Fatalf("only %d lists and %d routes taking JSON in the document", lists, bodies)
	}
	calls := documentedOp{method: "GET", path: "/api/v1/calls"}
	expectFaults(t, w.do("GET", "/api/v1/calls?status=sideways&agnet_id=x&direction=up", w.Owner.Token, nil), calls, unknownParam, "status", "direction")
	expectFaults(t, w.do("GET", "/api/v1/calls?per_page=0&agnet_id=x&Agent_id=y", w.Owner.Token, nil), calls, unknownParam, "per_page", "Agent_id")
}

// TestQueryParameterGivenTwice: a parameter the document declares as one value is 422
// when repeated, since which of the two counts would be a guess; one declared as an
// array (the event stream's types) may be repeated.
func TestQueryParameterGivenTwice(t *testing.T) {
	w := newRefusalWorkspace(t)
	tok := w.Owner.Token
	res := w.do("GET", "/api/v1/calls?status=ended&status=ended", tok, nil)
	expectFaults(t, res, documentedOp{method: "GET", path: "/api/v1/calls"}, "status")
	if got := asStrings(res.FieldErrors()["status"]); !slices.Equal(got, []string{"The status parameter must be given once."}) {
		t.Errorf("status's errors are %v", got)
	}
	expectFaults(t, w.do("GET", "/api/v1/agents?per_page=2&per_page=2&name=a", tok, nil), documentedOp{method: "GET", path: "/api/v1/agents"}, "per_page")
	// types twice is fine: the only fault named is the unknown parameter beside it.
	expectFaults(t, w.do("GET", "/api/v1/events/stream?types=agent.created&types=agent.updated&"+unknownParam+"=x", tok, nil),
		documentedOp{method: "GET", path: "/api/v1/events/stream"}, unknownParam)
	expect(t, w.do("GET", "/api/v1/calls?status=ended&per_page=5", tok, nil), 200)
}

// TestQueryParameterBadlyEncoded: a pair url.ParseQuery would drop unseen (a bad percent
// escape, a semicolon) is named rather than ignored, so a filter cannot vanish.
func TestQueryParameterBadlyEncoded(t *testing.T) {
	w := newRefusalWorkspace(t)
	calls := documentedOp{method: "GET", path: "/api/v1/calls"}
	expectFaults(t, w.do("GET", "/api/v1/calls?agent_id=agt_1%zz", w.Owner.Token, nil), calls, "agent_id")
	expectFaults(t, w.do("GET", "/api/v1/calls?agent%zzid=x", w.Owner.Token, nil), calls, "agent%zzid")
	expectFaults(t, w.do("GET", "/api/v1/calls?status=ended;agent_id=x", w.Owner.Token, nil), calls, "status")
	expect(t, w.do("GET", "/api/v1/calls?agent%5Fid="+w.ids["agent_id"]+"&", w.Owner.Token, nil), 200)
}

// expectFaults checks res is a 422 naming exactly names.
func expectFaults(t *testing.T, res *response, op documentedOp, names ...string) {
	t.Helper()
	if err := checkRefusal(refusal{op: op, want: 422}, res); err != nil {
		t.Errorf("%s %s: %v", op.method, op.path, err)
		return
	}
	var got []string
	for name := range res.FieldErrors() {
		got = append(got, name)
	}
	slices.Sort(got)
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("%s %s: the 422 names %v, want %v: %.300s", op.method, op.path, got, names, res.Body)
	}
}

// validRequest is the token and body op would take from the owner on w's records.
func (w *refusalWorkspace) validRequest(t *testing.T, doc map[string]any, op documentedOp) (string, any) {
	t.Helper()
	tok := w.Owner.Token
	switch op.path {
	case "/api/v1/auth/logout":
		tok = w.logout
	case "/api/v1/auth/login":
		tok = ""
	}
	if !op.jsonBody {
		return tok, nil
	}
	content := dig(t, doc, "paths", op.path, strings.ToLower(op.method), "requestBody", "content", "application/json").(map[string]any)
	example, _ := content["example"].(map[string]any)
	return tok, w.validBody(op, example)
}

func asStrings(v any) []string {
	var out []string
	for _, s := range asList(v) {
		str, _ := s.(string)
		out = append(out, str)
	}
	return out
}

// TestEveryParameterTheDocsShowIsDeclared: the parameters the docs' examples send (an
// analytics filter by agent_version was read by the server but not declared, so the
// check would have refused a documented request) are taken.
func TestEveryParameterTheDocsShowIsDeclared(t *testing.T) {
	w := newRefusalWorkspace(t)
	tok, agent := w.Owner.Token, w.ids["agent_id"]
	for _, path := range []string{
		"/api/v1/analytics/calls?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&agent_id=" + agent + "&agent_version=1&interval=day",
		"/api/v1/calls?per_page=100&agent_id=" + agent + "&status=ended&direction=web&number_id=" + w.ids["number_id"] + "&from=2026-01-01T00:00:00Z&to=2099-01-01T00:00:00Z",
		"/api/v1/calls?q=cancel&sort=relevance",
		"/api/v1/audit-log?type=agent.published&actor=" + w.Owner.ID + "&from=2026-01-01T00:00:00Z&to=2099-01-01T00:00:00Z",
		"/api/v1/numbers?agent_id=" + agent + "&per_page=5",
		"/api/v1/campaigns?agent_id=" + agent + "&status=running",
		"/api/v1/agents?status=draft&name=a",
	} {
		expect(t, w.do("GET", path, tok, nil), 200)
	}
}

// TestUnknownQueryParameterKeepsTheBodysFaults: the body's faults come with the query's
// whole and in their order, on every route taking JSON (TestDuplicateMemberRefusedOnEveryRoute's
// bodies, whose nested duplicate is named only when it keeps its place before its parent).
func TestUnknownQueryParameterKeepsTheBodysFaults(t *testing.T) {
	e := newEnv(t)
	n := 0
	for _, op := range documentedOps(t) {
		if !op.jsonBody {
			continue
		}
		n++
		for _, c := range duplicateMemberBodies[:2] {
			r := e.do(op.method, fill(op.path, e.Owner.WorkspaceID)+"?"+unknownParam+"=x", e.Owner.Token, c.body)
			expect(t, r, 422)
			if r.FieldErrors()[unknownParam] == nil || !namesGivenTwice(r, c.path) {
				t.Errorf("%s %s?%s=x %s: 422 does not name both %s and %s as given twice: %s", op.method, op.path, unknownParam, c.body, unknownParam, c.path, r.Body)
			}
		}
	}
	if n < 15 {
		t.Fatalf("only %d routes take a JSON body", n)
	}
}

// TestUnknownQueryParameterOnUploads: the bodies that are no JSON (a CSV, multipart
// parts) are read by their own code, which adds the query's faults too: each upload with
// ?agnet_id=x is a 422 naming it and stores nothing, and the same upload without it is
// taken.
func TestUnknownQueryParameterOnUploads(t *testing.T) {
	w := newRefusalWorkspace(t)
	tok := w.Owner.Token
	campaign, _ := json.Marshal(map[string]any{"name": "Uploaded", "agent_id": w.ids["agent_id"], "number_id": w.ids["number_id"],
		"window": everyDay, "max_concurrent": 1})
	uploads := []struct {
		path, ctype string
		body        []byte
		status      int
	}{
		{"/api/v1/suppressions/import", "text/csv", []byte("phone_number,reason\n+14155550171,asked\n"), 200},
	}
	for _, u := range []struct {
		path   string
		status int
		parts  []part
	}{
		{"/api/v1/suppressions/import", 200, []part{{name: "file", filename: "list.csv", content: []byte("phone_number\n+14155550172\n")}}},
		{"/api/v1/knowledge-bases/" + w.ids["knowledge_base_id"] + "/sources/add", 200, []part{{name: "texts", content: []byte("Parcels ship on Fridays.")}}},
		{"/api/v1/campaigns", 201, []part{{name: "campaign", content: campaign}, {name: "file", filename: "r.csv", content: []byte("phone_number\n+14155550173\n")}}},
	} {
		body, ct := multipartBody(t, u.parts...)
		uploads = append(uploads, struct {
			path, ctype string
			body        []byte
			status      int
		}{u.path, ct, body, u.status})
	}
	before := dumpStore(t, w.Store)
	for _, u := range uploads {
		res := w.do("POST", u.path+"?"+unknownParam+"=x", tok, u.body, "Content-Type", u.ctype)
		if res.Status != 422 || res.FieldErrors()[unknownParam] == nil {
			t.Errorf("POST %s (%s) with %s: %d %.300s, want 422 naming it", u.path, u.ctype, unknownParam, res.Status, res.Body)
		}
	}
	if changed := before.diff(dumpStore(t, w.Store), 8); len(changed) > 0 {
		t.Errorf("the refused uploads changed the store: %v", changed)
	}
	for _, u := range uploads {
		expect(t, w.do("POST", u.path, tok, u.body, "Content-Type", u.ctype), u.status)
	}
}
