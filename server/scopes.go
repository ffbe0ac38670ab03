package server

import (
	"net/http"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// runtimeRoutes are what the calls:runtime scope allows, and nothing more: exactly what a
// voice runtime needs to take calls (register and update them, read the agent and the
// number, retrieve knowledge).
var runtimeRoutes = map[string]bool{
	"POST /api/v1/calls":                                     true,
	"POST /api/v1/calls/start":                               true,
	"POST /api/v1/dial-tasks/claim":                          true,
	"PUT /api/v1/calls/{call_id}":                            true,
	"GET /api/v1/agents":                                     true,
	"GET /api/v1/agents/{agent_id}":                          true,
	"GET /api/v1/numbers":                                    true,
	"GET /api/v1/numbers/{number_id}":                        true,
	"POST /api/v1/knowledge-bases/{knowledge_base_id}/query": true,
	"POST /api/v1/agents/{agent_id}/knowledge/query":         true,
}

// prefixScopes give the routes outside the five modules their scope by path: reading
// needs the first, changing the second ("" when only reading is offered).
var prefixScopes = []struct{ prefix, read, write string }{
	{"/api/v1/webhooks", data.ScopeWebhooksRead, data.ScopeWebhooksWrite},
	{"/api/v1/audit-log", data.ScopeAuditRead, ""},
}

// withScopes completes a route's requirement with what the route tables leave to this
// file: the calls:runtime preset and the scopes of webhooks and the audit log. Module
// routes get theirs from data.Read and data.Write.
func withScopes(rt route) route {
	if runtimeRoutes[rt.Method+" "+rt.Path] {
		rt.Need.Runtime = true
	}
	if rt.Need.Scope != "" || rt.Public {
		return rt
	}
	for _, p := range prefixScopes {
		if strings.HasPrefix(rt.Path, p.prefix) {
			if rt.Method == http.MethodGet {
				rt.Need.Scope = p.read
			} else {
				rt.Need.Scope = p.write
			}
		}
	}
	return rt
}
