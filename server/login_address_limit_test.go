package server_test

import (
	"fmt"
	"testing"
)

// TestLoginLimitPerAddressAcrossEmails: one address guessing across made-up emails (each a
// full password hash, so as not to tell which have accounts) is refused once it has made
// ten times the per-email allowance of attempts, with 429, Retry-After and the error
// shape; its own account is refused too, while another address is still served.
func TestLoginLimitPerAddressAcrossEmails(t *testing.T) {
	e := newProxiedEnv(t, "127.0.0.0/8", "::1/128") // 2 a minute per email, so 20 per address
	const perAddress = 20
	for i := range perAddress {
		if r := loginFrom(e, fmt.Sprintf("made-up-%d@example.com", i), "203.0.113.7"); r.Status != 422 {
			t.Fatalf("attempt %d of %d: %d %s", i+1, perAddress, r.Status, r.Body)
		}
	}
	r := loginFrom(e, "made-up-next@example.com", "203.0.113.7")
	expect(t, r, 429)
	if r.Code() != "rate_limited" || headerInt(t, r, "Retry-After") < 1 || headerInt(t, r, "X-RateLimit-Limit") != perAddress {
		t.Errorf("past the address's bound: code %q, Retry-After %q, limit %q", r.Code(), r.Header.Get("Retry-After"), r.Header.Get("X-RateLimit-Limit"))
	}
	right := map[string]any{"email": e.Owner.Email, "password": e.Owner.Password}
	expect(t, e.do("POST", "/api/v1/auth/login", "", right, "X-Forwarded-For", "203.0.113.7"), 429)
	expect(t, e.do("POST", "/api/v1/auth/login", "", right, "X-Forwarded-For", "203.0.113.8"), 200)
}
