package console

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"

	"github.com/voiceapi/voiceapi/data"
)

// scopeNeeds maps each API key scope to what the operations it grants need of their
// caller, scope aside: read once from the API's own OpenAPI document, whose
// x-voiceapi-requires each operation states from the route table the API checks. A key
// never holds more than its user (docs/api.md, "Scoped API keys"), so a scope none of
// whose operations the user may perform would give a key nothing: the key form does not
// offer it.
type scopeNeeds struct {
	mu    sync.Mutex
	needs map[string][]data.Requirement // nil until read; a failed read is tried again
}

// requires is an operation's x-voiceapi-requires.
type requires struct {
	WorkspaceMember bool   `json:"workspace_member"`
	InstanceAdmin   bool   `json:"instance_admin"`
	AllAgents       bool   `json:"all_agents"`
	EveryModule     bool   `json:"every_module"`
	Runtime         bool   `json:"calls_runtime"`
	MinRole         string `json:"min_role"`
	Module          string `json:"module"`
	Scope           string `json:"scope"`
}

// load reads the document through the API (it is the same for every caller).
func (s *scopeNeeds) load(h *Handler, r *http.Request) map[string][]data.Requirement {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.needs != nil {
		return s.needs
	}
	res, err := h.call(r, "GET", "/api/v1/openapi.json", nil, nil)
	if err != nil {
		return nil // no needs known: every scope is offered, as before, and the API decides
	}
	raw, _ := json.Marshal(res.Body["paths"])
	var paths map[string]map[string]struct {
		Requires *requires `json:"x-voiceapi-requires"`
	}
	if json.Unmarshal(raw, &paths) != nil {
		return nil
	}
	needs := map[string][]data.Requirement{}
	for _, ops := range paths {
		for _, op := range ops {
			q := op.Requires
			if q == nil {
				continue
			}
			need := data.Requirement{Module: q.Module, MinRole: q.MinRole, Workspace: q.WorkspaceMember,
				InstanceAdmin: q.InstanceAdmin, AllAgents: q.AllAgents, EveryModule: q.EveryModule, AnyKey: true}
			if q.Scope != "" {
				needs[q.Scope] = append(needs[q.Scope], need)
			}
			if q.Runtime {
				needs[data.ScopeCallsRuntime] = append(needs[data.ScopeCallsRuntime], need)
			}
		}
	}
	s.needs = needs
	return s.needs
}

// heldScopes splits data.Scopes into those the signed-in user could give a key (at least
// one operation of the scope is theirs) and those it could not.
func (h *Handler) heldScopes(r *http.Request) (held, withheld []string) {
	needs := h.scopes.load(h, r)
	p := data.PrincipalFrom(r.Context())
	for _, sc := range data.Scopes {
		ok := needs == nil || slices.ContainsFunc(needs[sc], func(n data.Requirement) bool { return p.Allows(n) == nil })
		if ok {
			held = append(held, sc)
		} else {
			withheld = append(withheld, sc)
		}
	}
	return held, withheld
}
