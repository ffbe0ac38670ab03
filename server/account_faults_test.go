package server_test

import (
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// The server decodes, the service checks the rules: one 422 still names the faults of
// both at once, and nothing is stored.
func TestAccountBodiesReportDecodeAndRuleFaultsTogether(t *testing.T) {
	s := testkit.NewServer(t, nil)
	ws := s.Owner.WorkspaceID
	owner := testkit.AsOwner
	s.Run(t, []testkit.Scenario{
		{Name: "workspace create", Method: "POST", Path: "/api/v1/workspaces", Token: owner,
			Body: `{"name":" ","color":"red","description":7}`, Fields: []string{"name", "color", "description"}},
		{Name: "workspace update", Method: "PUT", Path: "/api/v1/workspaces/" + ws, Token: owner,
			Body: `{"name":"","extra":true}`, Fields: []string{"name", "extra"}},
		{Name: "member add", Method: "POST", Path: "/api/v1/workspaces/" + ws + "/users", Token: owner,
			Body: `{"role":"boss","modules":"agents"}`, Fields: []string{"id", "role", "modules"}},
		{Name: "user create", Method: "POST", Path: "/api/v1/users", Token: owner,
			Body: `{"name":"","email":"not-an-email","password":"short","admin":true}`, Fields: []string{"name", "email", "password", "admin"}},
		{Name: "api key create", Method: "POST", Path: "/api/v1/api-keys", Token: owner,
			Body: `{"name":"","expiration":"yesterday","scope":"x"}`, Fields: []string{"name", "expiration", "scope"}},
		{Name: "login", Method: "POST", Path: "/api/v1/auth/login",
			Body: `{"email":"","password":"","remember":true}`, Fields: []string{"email", "password", "remember"}},
		{Name: "nothing was stored", Method: "GET", Path: "/api/v1/workspaces", Token: owner, Status: 200,
			Check: func(t *testing.T, s *testkit.Server, r *testkit.Response) {
				if n := len(r.List()); n != 1 {
					t.Errorf("the owner has %d workspaces after refused creates, want 1", n)
				}
			}},
	})
}
