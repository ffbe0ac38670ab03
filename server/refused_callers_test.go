package server_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// denial is a request a permitted caller would have had accepted, sent by a caller the
// route must refuse.
type denial struct {
	refusal
	by *denier
}

// TestEveryDeniedWriteChangesNothing sends every route that writes (each POST, PUT, PATCH
// and DELETE of the OpenAPI document) the request a permitted caller would have had
// accepted (the refused writes' valid body, to the workspace's records) as every caller
// its declared requirement refuses (refused_callers_fixture_test.go): a member whose role
// is below it, one without its module, the owner's key without its scope, a member or
// key limited to another agent than the one the request is about, the owner of another
// workspace. Each answer is the refusal the conventions give, 403 forbidden or 404
// not_found (§2, §6, §20), in the error shape, and the whole store is byte for byte what
// it was: no refusal by who is asking is recorded (docs/api.md lists the one refusal that
// is, a failed login). A route honouring Idempotency-Key gets one each time; once every
// refusal is sent, a caller now permitted sends one route's refused request again with
// its key (checkNoRefusalReplayed): it is carried out, not answered with a kept refusal,
// and a third send replays it.
func TestEveryDeniedWriteChangesNothing(t *testing.T) {
	started := time.Now()
	w := newRefusalWorkspace(t)
	d := newDeniers(t, w)
	_, doc := openapiDocument(t)
	var cases []denial
	idempotent := map[documentedOp]bool{}
	for _, op := range documentedOps(t) {
		if isWrite(op.method) {
			cases = append(cases, d.denialsOf(t, doc, op)...)
			idempotent[op] = takesParameter(t, doc, op, "IdempotencyKey")
		}
	}
	t.Logf("workspace and callers built in %s; %d denied requests", time.Since(started).Round(time.Millisecond), len(cases))
	coverage, byCaller := map[string]map[string]bool{}, map[string]int{}
	replays := map[documentedOp]denial{}
	watch := watchStore(t, w.Store)
	for i, c := range cases {
		if idempotent[c.op] {
			c.headers = append(c.headers, "Idempotency-Key", fmt.Sprintf("denied-%d", i))
			if prev, ok := replays[c.op]; !ok || !prev.by.widens() && c.by.widens() {
				replays[c.op] = c
			}
		}
		res := w.do(c.op.method, c.path, c.token, c.body, c.headers...)
		if err := checkDenial(c, res); err != nil {
			t.Errorf("%s %s: %v", c, c.by, err)
		}
		if changed := watch.changed(t, 8); len(changed) > 0 {
			t.Errorf("%s %s (%d) changed the store: %v", c, c.by, res.Status, changed)
		}
		route := c.op.method + " " + c.op.path
		if coverage[route] == nil {
			coverage[route] = map[string]bool{}
		}
		coverage[route][c.kind] = true
		byCaller[c.kind]++
	}
	t.Logf("denied requests by caller: %v", byCaller)
	checkDenialCoverage(t, doc, coverage)
	d.checkNoRefusalReplayed(t, idempotent, replays)
	if len(watch.changed(t, 1)) == 0 {
		// The permitted requests wrote: a mark that missed them would miss a refusal's.
		t.Error("the store's mark did not move when permitted requests wrote")
	}
	t.Logf("%d denied requests to %d write routes, %d replays checked, in %s (%d dumps of the store)", len(cases), len(coverage), len(replays), time.Since(started).Round(time.Millisecond), watch.dumps)
}

// denialsOf are op's valid request as each caller its requirement refuses.
func (d *deniers) denialsOf(t *testing.T, doc map[string]any, op documentedOp) []denial {
	t.Helper()
	r, ok := requirementOf(t, doc, op)
	if !ok {
		return nil // public: no caller to refuse
	}
	var body any
	if op.jsonBody {
		media := dig(t, doc, "paths", op.path, strings.ToLower(op.method), "requestBody", "content").(map[string]any)
		example, _ := media["application/json"].(map[string]any)["example"].(map[string]any)
		body = d.w.validBody(op, example)
	}
	var out []denial
	for _, c := range d.candidates(r) {
		want, field := d.wantOf(c, r, op, body)
		if want == 0 {
			continue
		}
		c.need = r
		by := &c
		tok := d.token(t, by)
		out = append(out, denial{refusal: refusal{op: op, kind: by.kindName(), path: d.w.path(op.path, "", ""), token: tok, body: body, want: want, field: field}, by: by})
	}
	return out
}

// checkDenial checks the answer is the refusal c wants, in the error shape: where c names
// the agent in a body member, a 422 naming it or the 404 of a route that looks its record
// up by it.
func checkDenial(c denial, res *response) error {
	r := c.refusal
	if r.field != "" && res.Status == 404 {
		r.want = 404
	}
	return checkRefusal(r, res)
}

// kindName groups a caller's name by what refuses it, for the coverage log.
func (c *denier) kindName() string {
	switch {
	case c.name == "owner-of-another-workspace":
		return "another workspace's owner"
	case c.scopes != nil:
		return "key without the scope"
	case len(c.agentIDs) > 0 && c.role == data.RoleOwner:
		return "key limited to another agent"
	case len(c.agentIDs) > 0:
		return "member limited to another agent"
	case len(c.modules) < len(data.Modules):
		return "member without the module"
	}
	return "role below"
}

// widened is c as an admin holding every module and agent: what the replay check makes
// a refused member before it sends its request again.
func (c *denier) widened() caller {
	w := c.caller
	w.role, w.modules, w.agentIDs = data.RoleAdmin, data.Modules, nil
	return w
}

// widens reports whether c is a member whom widening permits the route refused.
func (c *denier) widens() bool { return c.userID != "" && c.widened().allows(c.need) }

// checkNoRefusalReplayed sends each idempotent route's refused request again with the
// same Idempotency-Key, as a caller now permitted: the refused member widened, with its
// own token (a kept refusal would be replayed to it), or where no member can be (a key's
// scopes are fixed, an instance administrator is no workspace role) the owner, whose
// token must not meet another token's key either. The route carries it out (2xx, not
// replayed), and a third send is the replay of that answer, so the key was honoured.
func (d *deniers) checkNoRefusalReplayed(t *testing.T, idempotent map[documentedOp]bool, replays map[documentedOp]denial) {
	t.Helper()
	widened := map[string]bool{}
	for _, op := range slices.SortedFunc(maps.Keys(replays), func(a, b documentedOp) int { return strings.Compare(a.method+a.path, b.method+b.path) }) {
		c := replays[op]
		tok := d.w.Owner.Token
		if c.by.widens() {
			tok = c.token
			if !widened[c.by.userID] {
				res := d.w.do("PUT", "/api/v1/workspaces/"+d.w.ws+"/users/"+c.by.userID, d.w.Owner.Token,
					map[string]any{"role": data.RoleAdmin, "modules": data.Modules, "agent_ids": []string{}})
				expect(t, res, 200)
				widened[c.by.userID] = true
			}
		}
		first := d.w.do(c.op.method, c.path, tok, c.body, c.headers...)
		if first.Status >= 300 || first.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("%s after the refusal %s, permitted: %d replayed=%q, want it carried out: %.300s", c, c.by, first.Status, first.Header.Get("Idempotent-Replayed"), first.Body)
			continue
		}
		again := d.w.do(c.op.method, c.path, tok, c.body, c.headers...)
		if again.Status != first.Status || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("%s sent a third time: %d replayed=%q, want the replay of %d", c, again.Status, again.Header.Get("Idempotent-Replayed"), first.Status)
		}
	}
	for op, ok := range idempotent {
		if _, checked := replays[op]; ok && !checked {
			t.Logf("%s %s: no caller is refused it (any token may); no replay to check", op.method, op.path)
		}
	}
}

// checkDenialCoverage fails unless every write route that is not public nor open to
// every token was sent a denied request, and each of a module's routes one from a
// member without the module.
func checkDenialCoverage(t *testing.T, doc map[string]any, coverage map[string]map[string]bool) {
	n := 0
	for _, op := range documentedOps(t) {
		r, ok := requirementOf(t, doc, op)
		if !isWrite(op.method) || !ok || r.AnyKey {
			continue
		}
		n++
		kinds := coverage[op.method+" "+op.path]
		if len(kinds) == 0 {
			t.Errorf("%s %s: no denied request sent", op.method, op.path)
		}
		if r.Module != "" && !kinds["member without the module"] {
			t.Errorf("%s %s: no member without %s was refused", op.method, op.path, r.Module)
		}
		if !kinds["key without the scope"] {
			t.Errorf("%s %s: no key without its scope was refused", op.method, op.path)
		}
	}
	if n < 55 {
		t.Fatalf("only %d write routes with a requirement in the document", n)
	}
}
