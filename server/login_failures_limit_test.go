package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/server"
)

// newAddressLimitedEnv serves with a per-email login limit high enough to stay out of the
// way and perAddress failed logins a minute per client address, on a clock the test holds
// still (a window boundary mid-test would reset the counts), trusting loopback's
// X-Forwarded-For so that each test's address is its own.
func newAddressLimitedEnv(t *testing.T, perAddress int) *env {
	t.Helper()
	proxies, err := server.ParseTrustedProxies([]string{"127.0.0.0/8", "::1/128"})
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	return newEnvWith(t, nil, func(c *server.Config) {
		c.LoginRateLimit, c.LoginAddressRateLimit, c.Now, c.TrustedProxies = 1000, perAddress, clock.Now, proxies
	})
}

// TestLoginAddressLimitCountsFailuresOnly: people behind one NAT address log in as often
// as they like (200 successes in a minute, past the address's bound of 100), while
// failures from that address are refused at the 101st, with 429 and Retry-After; then
// the right password from that address is refused too, and another address is served.
func TestLoginAddressLimitCountsFailuresOnly(t *testing.T) {
	e := newAddressLimitedEnv(t, 100)
	const office = "198.51.100.20"
	right := map[string]any{"email": e.Owner.Email, "password": e.Owner.Password}
	for i := range 200 {
		if r := e.do("POST", "/api/v1/auth/login", "", right, "X-Forwarded-For", office); r.Status != 200 {
			t.Fatalf("successful login %d of 200 from one address: %d %s", i+1, r.Status, r.Body)
		}
	}
	for i := range 100 {
		if r := loginFrom(e, fmt.Sprintf("made-up-%d@example.com", i), office); r.Status != 422 {
			t.Fatalf("failure %d of 100: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := loginFrom(e, "made-up-100@example.com", office)
	expect(t, r, 429)
	if headerInt(t, r, "Retry-After") < 1 || headerInt(t, r, "X-RateLimit-Limit") != 100 {
		t.Errorf("the 101st failure: Retry-After %q, X-RateLimit-Limit %q", r.Header.Get("Retry-After"), r.Header.Get("X-RateLimit-Limit"))
	}
	expect(t, e.do("POST", "/api/v1/auth/login", "", right, "X-Forwarded-For", office), 429)
	expect(t, e.do("POST", "/api/v1/auth/login", "", right, "X-Forwarded-For", "198.51.100.21"), 200)
}

// TestLoginAddressLimitHoldsForFailuresAtOnce: failures sent at once are held to the
// bound exactly: each attempt holds its place in the count while its password is
// hashed, so none slips past a count the others have not raised yet.
func TestLoginAddressLimitHoldsForFailuresAtOnce(t *testing.T) {
	e := newAddressLimitedEnv(t, 10)
	const n = 25
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Go(func() {
			statuses[i] = loginFrom(e, fmt.Sprintf("at-once-%d@example.com", i), "198.51.100.30").Status
		})
	}
	wg.Wait()
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	if counts[422] != 10 || counts[http.StatusTooManyRequests] != n-10 {
		t.Errorf("%d failed logins at once against a bound of 10: %v, want 10 × 422 and %d × 429", n, counts, n-10)
	}
}

// TestPasswordChangeCountsOnlyRefusalsPerAddress: a refused current_password counts
// against the address's failures, a password change that goes through does not.
func TestPasswordChangeCountsOnlyRefusalsPerAddress(t *testing.T) {
	e := newAddressLimitedEnv(t, 3)
	const addr = "198.51.100.40"
	change := func(current, next string) *response {
		return e.do("PUT", "/api/v1/user", e.Owner.Token, map[string]any{"password": next, "current_password": current}, "X-Forwarded-For", addr)
	}
	password := e.Owner.Password
	for i := range 5 {
		next := fmt.Sprintf("new password number %d", i)
		expect(t, change(password, next), 200)
		password = next
	}
	for i := range 3 {
		expect(t, change(fmt.Sprintf("wrong guess %d", i), "whatever it is"), 422)
	}
	expect(t, change(password, "one more password"), 429)
	// Changing the name alone guesses nothing, and is not refused.
	expect(t, e.do("PUT", "/api/v1/user", e.Owner.Token, map[string]any{"name": "Still me"}, "X-Forwarded-For", addr), 200)
}
