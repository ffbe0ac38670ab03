package server_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// GET /api/v1/agents?name= finds agents by a part of their name, ignoring case, with the
// other filters, and refuses a search longer than a name.
func TestAgentSearchByName(t *testing.T) {
	s := testkit.NewServer(t, nil)
	for _, name := range []string{"Front desk", "Back office", "front line", "Night shift"} {
		testkit.Expect(t, s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": name}), 201)
	}
	names := func(r *testkit.Response) []string {
		var out []string
		for _, a := range r.List() {
			out = append(out, a.(map[string]any)["name"].(string))
		}
		return out
	}
	s.Run(t, []testkit.Scenario{
		{Name: "a part, any case", Method: "GET", Path: "/api/v1/agents?name=FRONT", Token: testkit.AsOwner, Status: 200,
			Check: func(t *testing.T, s *testkit.Server, r *testkit.Response) {
				if got := strings.Join(names(r), ","); got != "front line,Front desk" {
					t.Errorf("found %s", got)
				}
			}},
		{Name: "with the status filter", Method: "GET", Path: "/api/v1/agents?name=front&status=published", Token: testkit.AsOwner, Status: 200,
			Check: func(t *testing.T, s *testkit.Server, r *testkit.Response) {
				if len(r.List()) != 0 {
					t.Errorf("drafts listed as published: %v", names(r))
				}
			}},
		{Name: "paged", Method: "GET", Path: "/api/v1/agents?name=o&per_page=2", Token: testkit.AsOwner, Status: 200,
			Check: func(t *testing.T, s *testkit.Server, r *testkit.Response) {
				next, _ := r.Meta()["next_cursor"].(string)
				if len(r.List()) != 2 || next == "" {
					t.Fatalf("first page %v, next %q", names(r), next)
				}
				rest := s.Do("GET", "/api/v1/agents?name=o&per_page=2&cursor="+next, s.Owner.Token, nil)
				if got := names(rest); len(got) != 1 || got[0] != "Front desk" {
					t.Errorf("second page %v", got)
				}
				testkit.ExpectFields(t, s.Do("GET", "/api/v1/agents?name=x&cursor="+next, s.Owner.Token, nil), "cursor")
			}},
		{Name: "too long", Method: "GET", Path: "/api/v1/agents?name=" + strings.Repeat("n", 256), Token: testkit.AsOwner, Fields: []string{"name"}},
		{Name: "at the bound", Method: "GET", Path: "/api/v1/agents?name=" + strings.Repeat("n", 255), Token: testkit.AsOwner, Status: 200},
	})
}
