package server_test

import (
	"slices"
	"strings"
	"testing"
)

// TestSpecEveryEndpointButLoginNeedsAToken: "All endpoints except login require the
// bearer header described under Authentication" (Endpoints). Every documented operation
// is called without a token, and with a token that is not one, and with a body that is
// garbage: each is 401 unauthenticated with WWW-Authenticate: Bearer (conventions §2),
// before its body, path or query is looked at, so nothing about a route's rules or
// records is told to a caller without a token. The exceptions are login, the interface
// description (public, docs/api.md) and the operator's /healthz and /readyz (§16).
func TestSpecEveryEndpointButLoginNeedsAToken(t *testing.T) {
	e := newEnv(t)
	public := []string{"POST /api/v1/auth/login", "GET /api/v1/openapi.json", "GET /healthz", "GET /readyz"}
	for _, op := range documentedOps(t) {
		if slices.Contains(public, op.method+" "+op.path) {
			continue
		}
		p := fill(op.path, e.Owner.WorkspaceID) + "?per_page=0&cursor=x"
		for _, auth := range []string{"", "Bearer 1|" + strings.Repeat("x", 40), "Bearer"} {
			r := e.do(op.method, p, "", "{not json", "Content-Type", "text/plain", "Authorization", auth)
			if r.Status != 401 || r.Code() != "unauthenticated" || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s with Authorization %q: %d %q, WWW-Authenticate %q; want 401 unauthenticated",
					op.method, op.path, auth, r.Status, r.Code(), r.Header.Get("WWW-Authenticate"))
			}
		}
	}
	for _, p := range public[1:] {
		method, route, _ := strings.Cut(p, " ")
		expect(t, e.do(method, route, "", nil), 200)
	}
}
