package server

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

// withScopes completes a route's requirement with what the route tables leave to this
// file: the calls:runtime preset. Module routes get their scopes from data.Read and
// data.Write, the webhooks' and the audit log's from data.NeedWebhooks and
// data.NeedAuditLog, which the console reads too.
func withScopes(rt route) route {
	if runtimeRoutes[rt.Method+" "+rt.Path] {
		rt.Need.Runtime = true
	}
	return rt
}
