package server_test

import (
	"testing"
	"time"
)

// A password change's current_password is a guess at the password like a login: it counts
// against the login limit of the pair of client address and email (conventions §15), in
// the same count as the logins, so a token (stolen, say) cannot guess at the token's rate
// of 300 a minute. Once past it, even the right current password is 429, and nothing
// changes; a minute later it goes through.
func TestPasswordChangeCountsAgainstTheLoginLimit(t *testing.T) {
	e, clock := newLimitedEnv(t, 0, 3)
	change := func(current string) *response {
		return e.do("PUT", "/api/v1/user", e.Owner.Token, map[string]any{"password": "a brand new password", "current_password": current})
	}
	expect(t, e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.Owner.Email, "password": "wrong-password"}), 422)
	expect(t, change("wrong guess 1"), 422)
	expect(t, change("wrong guess 2"), 422)
	r := change(e.Owner.Password)
	expect(t, r, 429)
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	// Changing the name alone guesses nothing: not counted, not refused.
	expect(t, e.do("PUT", "/api/v1/user", e.Owner.Token, map[string]any{"name": "Still me"}), 200)
	expect(t, e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.Owner.Email, "password": e.Owner.Password}), 429)

	clock.Add(time.Minute)
	expect(t, change(e.Owner.Password), 200)
	expect(t, e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.Owner.Email, "password": "a brand new password"}), 200)
}
