package server_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// The callers a route must refuse, derived from the requirement the route table declares
// (the document's x-voiceapi-requires) by the rule TestAccessMatrix states (caller.allows):
// members of every role below the owner, with every module, without the route's module,
// or limited to an agent the request is not about; the owner's key holding every scope
// but those the route takes, and one limited to that other agent; and the owner of
// another workspace, who is no member of this one.

// denier is one caller of the refusal workspace: its rights, and for a member the user id
// the replay check widens.
type denier struct {
	caller
	userID string
	// need is the requirement of the route the caller was refused.
	need requires
}

// deniers makes the callers on demand (a member or key is made the first time a route
// needs it) and keeps them, so a member refused by many routes is one account.
type deniers struct {
	w *refusalWorkspace
	// other is an agent of the workspace no request is about: the limited callers' one.
	other string
	made  map[string]*denier
	// tokens are the callers' tokens, made once by name.
	tokens map[string]string
}

func newDeniers(t *testing.T, w *refusalWorkspace) *deniers {
	t.Helper()
	d := &deniers{w: w, other: w.create(t, "/api/v1/agents", map[string]any{"name": "Other"}), made: map[string]*denier{}, tokens: map[string]string{}}
	// The number's inbound agent is the workspace's agent, so a call started on it is a
	// request about that agent (docs/runtime.md).
	res := w.do("PUT", "/api/v1/numbers/"+w.ids["number_id"], w.Owner.Token, map[string]any{"inbound_agent_id": w.ids["agent_id"]})
	expect(t, res, 200)
	return d
}

// candidates are the callers weighed for every route whose requirement is r: each is
// sent the route's valid request when the rule refuses it, or when it is limited to the
// other agent and the request is about the workspace's agent.
func (d *deniers) candidates(r requires) []denier {
	var out []denier
	for _, role := range []string{data.RoleAdmin, data.RoleDeveloper, data.RoleMember} {
		out = append(out, d.member(role, "", false))
		if r.Module != "" {
			out = append(out, d.member(role, r.Module, false))
		}
		if role != data.RoleAdmin { // an admin is never limited to agents (conventions §6)
			out = append(out, d.member(role, "", true))
		}
	}
	if !r.AnyKey {
		scopes := scopesRefusing(r)
		out = append(out, denier{caller: caller{name: "owner-key-scopes-" + strings.Join(scopes, ","), admin: true, role: data.RoleOwner, scopes: scopes}})
	}
	out = append(out, denier{caller: caller{name: "owner-key-other-agent", admin: true, role: data.RoleOwner, agentIDs: []string{d.other}}})
	return append(out, denier{caller: caller{name: "owner-of-another-workspace", role: data.RoleOwner}})
}

// member is the member of role holding every module but without (none when ""), limited
// to the other agent when limited.
func (d *deniers) member(role, without string, limited bool) denier {
	c := caller{name: role, role: role, modules: slices.DeleteFunc(slices.Clone(data.Modules), func(m string) bool { return m == without })}
	if without != "" {
		c.name += "-without-" + without
	}
	if limited {
		c.name, c.agentIDs = c.name+"-other-agent", []string{d.other}
	}
	return denier{caller: c}
}

// scopesRefusing are every scope but those that grant what r needs: its scope, the write
// scope that holds a read one, and calls:runtime where r is part of it. A key with them
// all is refused only for the one it lacks.
func scopesRefusing(r requires) []string {
	var out []string
	for _, s := range data.Scopes {
		grants := r.Scope != "" && (s == r.Scope || s == writeOf(r.Scope)) || r.Runtime && s == data.ScopeCallsRuntime
		if !grants {
			out = append(out, s)
		}
	}
	return out
}

// token is c's token, made the first time it is asked for: a member added to the
// workspace with its role, modules and agents, or a key of the owner's narrowed to its
// scopes or agents, or the token of a user who owns a workspace of its own.
func (d *deniers) token(t *testing.T, c *denier) string {
	t.Helper()
	if made := d.made[c.name]; made != nil {
		c.userID = made.userID
		return d.tokens[c.name]
	}
	w := d.w
	var tok string
	switch {
	case c.name == "owner-of-another-workspace":
		u := w.User(t, "another-owner@example.com")
		tok = w.Token(t, u, "")
	case c.role == data.RoleOwner:
		body := map[string]any{"name": fmt.Sprintf("denier %d", len(d.made))}
		if c.scopes != nil {
			body["scopes"] = c.scopes
		}
		if c.agentIDs != nil {
			body["agent_ids"] = c.agentIDs
		}
		res := w.do("POST", "/api/v1/api-keys", w.Owner.Token, body)
		expect(t, res, 201)
		tok = res.JSON()["token"].(string)
	default:
		u := w.User(t, "denied-"+c.name+"@example.com")
		owner := testkit.AsRole(&data.User{ID: w.Owner.ID}, w.ws, data.RoleOwner)
		in := data.WorkspaceUserAdd{ID: u.ID, Role: c.role, Modules: data.Some(c.modules)}
		if c.agentIDs != nil {
			in.AgentIDs = data.Some(c.agentIDs)
		}
		if _, err := w.Svc.WorkspaceUsers.AddWorkspaceUser(owner, w.ws, in); err != nil {
			t.Fatalf("adding %s: %v", c.name, err)
		}
		tok, c.userID = w.Token(t, u, w.ws), u.ID
	}
	d.made[c.name], d.tokens[c.name] = c, tok
	return tok
}

// requirementOf is op's x-voiceapi-requires; false for a public route.
func requirementOf(t *testing.T, doc map[string]any, op documentedOp) (requires, bool) {
	t.Helper()
	o := dig(t, doc, "paths", op.path, strings.ToLower(op.method)).(map[string]any)
	raw, ok := o["x-voiceapi-requires"]
	if !ok {
		return requires{}, false
	}
	var r requires
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s %s: x-voiceapi-requires: %v", op.method, op.path, err)
	}
	return r, true
}

// agentRecordParams are the path parameters naming the agent or a record of one (docs/api.md,
// "What a caller sees"): a request naming one is about the workspace's agent.
var agentRecordParams = []string{"agent_id", "call_id", "conversation_id", "test_id", "campaign_id"}

// agentNamed tells how the request names the workspace's agent: by a path parameter
// (inPath), or by the body member holding its id or the number whose inbound agent it is
// (member); neither when it is about no agent.
func (d *deniers) agentNamed(op documentedOp, body any) (inPath bool, member string) {
	for _, p := range pathParam.FindAllString(op.path, -1) {
		if slices.Contains(agentRecordParams, strings.Trim(p, "{}")) {
			return true, ""
		}
	}
	m, _ := body.(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if m[name] == d.w.ids["agent_id"] || m[name] == d.w.values["phone_number"] {
			return false, name
		}
	}
	return false, ""
}

// recordNamed is the body member naming a record of the workspace, "" when none does.
func (d *deniers) recordNamed(body any) string {
	m, _ := body.(map[string]any)
	ids := slices.Collect(maps.Values(d.w.ids))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if s, ok := m[name].(string); ok && (slices.Contains(ids, s) || s == d.w.values["phone_number"]) {
			return name
		}
	}
	return ""
}

// wantOf is the answer c must get to op's valid request, 0 when c may make it: 403 where
// the rule refuses c (conventions §6, §20); where c may not see the agent the request is
// about, or is no member of the workspace its records are in, what naming nothing gets
// (§2: existence is never revealed): 404 for a path id, and for a body member a 422
// naming it (docs/numbers.md) or the 404 of a route that finds its record by it
// (docs/runtime.md: a call start's to_number).
func (d *deniers) wantOf(c denier, r requires, op documentedOp, body any) (int, string) {
	if c.name == "owner-of-another-workspace" {
		switch {
		case r.InstanceAdmin:
			return 403, ""
		case strings.Contains(op.path, "{"):
			return 404, ""
		case d.recordNamed(body) != "":
			return 422, d.recordNamed(body)
		}
		return 0, ""
	}
	if !c.allows(r) {
		return 403, ""
	}
	if inPath, member := d.agentNamed(op, body); len(c.agentIDs) > 0 && (inPath || member != "") {
		if inPath {
			return 404, ""
		}
		return 422, member
	}
	return 0, ""
}

// String names a denier for a failure.
func (c denier) String() string { return fmt.Sprintf("as %s", c.name) }
