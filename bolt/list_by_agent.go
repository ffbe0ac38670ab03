package bolt

import "slices"

// A workspace's records kept by agent and status (conversations, campaigns) are listed in
// one layout of scopes: "<ws>" and "<ws>/a/<agent>" hold every record, and each with
// "/s/<status>" its records of that status. A page walks only the records it may show:
// the workspace's, the agent's, or each of a caller's agents' merged, of every status or
// of one.

// agentScopes are the scopes a record of ws and agentID is listed under.
func agentScopes(ws, agentID string) []string { return []string{ws, agentScope(ws, agentID)} }

// agentScope is agentID's scope in ws.
func agentScope(ws, agentID string) string { return ws + "/a/" + agentID }

// listStatusScope is scope's part for status.
func listStatusScope(scope, status string) string { return scope + "/s/" + status }

// walkScopes are the scopes a page of ws's records walks, for the filters agentID and
// status ("" for none) and the caller's agents (nil for every agent, empty for none):
// nil for ws's own scope alone.
func walkScopes(ws, agentID, status string, agentIDs []string) []string {
	var scopes []string
	switch {
	case agentID != "" && (agentIDs == nil || slices.Contains(agentIDs, agentID)):
		scopes = []string{agentScope(ws, agentID)}
	case agentID != "":
		scopes = []string{} // an agent the caller may not see: nothing
	case agentIDs != nil:
		scopes = make([]string, 0, len(agentIDs))
		for _, a := range agentIDs {
			scopes = append(scopes, agentScope(ws, a))
		}
	}
	if status == "" {
		return scopes
	}
	if scopes == nil {
		scopes = []string{ws}
	}
	for i := range scopes {
		scopes[i] = listStatusScope(scopes[i], status)
	}
	return scopes
}
