package server_test

import "testing"

func TestUnknownRouteAndMethod(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/api/v1/nothing-here", e.Owner.Token, nil)
	expect(t, r, 404)
	r = e.do("PATCH", "/api/v1/user", e.Owner.Token, nil)
	expect(t, r, 405)
	if got := r.Header.Get("Allow"); got != "GET, HEAD, PUT" {
		t.Errorf("Allow = %q", got)
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
}
