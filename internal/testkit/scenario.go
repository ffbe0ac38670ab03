package testkit

import (
	"strings"
	"testing"
)

// Scenario is one HTTP exchange and what must come of it; a table of them is an API test
// (after pocketbase's ApiScenario). Vars expand "{name}" in Path and in a string Body.
type Scenario struct {
	Name    string
	Method  string
	Path    string
	Token   func(s *Server) string // the caller; nil sends no token
	Body    any
	Headers []string // name, value pairs
	Vars    map[string]string

	Status int      // the status the response must have
	Code   string   // the error code a failure must carry ("" not checked)
	Fields []string // the dot paths a 422 must name, exactly
	// Contains are substrings the body must hold (after Vars expansion).
	Contains []string
	// Check runs further assertions on the response.
	Check func(t *testing.T, s *Server, r *Response)
}

// Run runs each scenario as a subtest against s; the scenarios share s, in order, so a
// later one sees what an earlier one changed.
func (s *Server) Run(t *testing.T, scenarios []Scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			prev := s.T
			s.T = t
			defer func() { s.T = prev }()
			expand := func(v string) string {
				for k, val := range sc.Vars {
					v = strings.ReplaceAll(v, "{"+k+"}", val)
				}
				return v
			}
			body := sc.Body
			if str, ok := body.(string); ok {
				body = expand(str)
			}
			token := ""
			if sc.Token != nil {
				token = sc.Token(s)
			}
			r := s.Do(sc.Method, expand(sc.Path), token, body, sc.Headers...)
			if sc.Fields != nil {
				ExpectFields(t, r, sc.Fields...)
			} else {
				Expect(t, r, sc.Status)
			}
			if sc.Code != "" && r.Code() != sc.Code {
				t.Errorf("code %q, want %q; body: %s", r.Code(), sc.Code, r.Body)
			}
			for _, want := range sc.Contains {
				if !strings.Contains(string(r.Body), expand(want)) {
					t.Errorf("body lacks %q: %s", expand(want), r.Body)
				}
			}
			if sc.Check != nil {
				sc.Check(t, s, r)
			}
		})
	}
}

// TokenOf returns a Scenario token function for an account chosen when the scenario runs.
func TokenOf(pick func(s *Server) *Account) func(s *Server) string {
	return func(s *Server) string { return pick(s).Token }
}

// AsOwner is the token of the server's owner.
func AsOwner(s *Server) string { return s.Owner.Token }
