package server_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/server"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newLimitedEnv(t *testing.T, perToken, login int) (*env, *fakeClock) {
	clock := &fakeClock{t: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	e := newEnvWith(t, nil, func(c *server.Config) {
		c.RateLimit, c.LoginRateLimit, c.Now = perToken, login, clock.Now
	})
	return e, clock
}

func headerInt(t *testing.T, r *response, name string) int {
	t.Helper()
	n, err := strconv.Atoi(r.Header.Get(name))
	if err != nil {
		t.Fatalf("header %s = %q: %v", name, r.Header.Get(name), err)
	}
	return n
}

func TestRateLimitPerToken(t *testing.T) {
	e, clock := newLimitedEnv(t, 3, 0)
	for i := 0; i < 3; i++ {
		r := e.do("GET", "/api/v1/user", e.Owner.Token, nil)
		expect(t, r, 200)
		if got := headerInt(t, r, "X-RateLimit-Limit"); got != 3 {
			t.Errorf("X-RateLimit-Limit = %d, want 3", got)
		}
		if got := headerInt(t, r, "X-RateLimit-Remaining"); got != 2-i {
			t.Errorf("request %d: X-RateLimit-Remaining = %d, want %d", i, got, 2-i)
		}
		if got := headerInt(t, r, "X-RateLimit-Reset"); got != 60 {
			t.Errorf("X-RateLimit-Reset = %d, want 60 (no time has passed)", got)
		}
	}
	clock.Add(20 * time.Second)
	r := e.do("GET", "/api/v1/user", e.Owner.Token, nil)
	expect(t, r, 429)
	if r.Code() != "rate_limited" {
		t.Errorf("code = %q", r.Code())
	}
	retry := headerInt(t, r, "Retry-After")
	if retry != 40 || headerInt(t, r, "X-RateLimit-Reset") != 40 || headerInt(t, r, "X-RateLimit-Remaining") != 0 {
		t.Errorf("Retry-After %d, headers %v; want 40 seconds left", retry, r.Header)
	}

	// Another token has its own allowance.
	other := e.newUser("other@example.com", false)
	expect(t, e.do("GET", "/api/v1/user", other.Token, nil), 200)

	// Any route of the same token is limited, even one it may not call.
	expect(t, e.do("GET", "/api/v1/users", e.Owner.Token, nil), 429)

	// One second before the reset the header promised: still refused; at it: allowed.
	clock.Add(time.Duration(retry)*time.Second - time.Second)
	expect(t, e.do("GET", "/api/v1/user", e.Owner.Token, nil), 429)
	clock.Add(time.Second)
	r = e.do("GET", "/api/v1/user", e.Owner.Token, nil)
	expect(t, r, 200)
	if got := headerInt(t, r, "X-RateLimit-Remaining"); got != 2 {
		t.Errorf("after the reset X-RateLimit-Remaining = %d, want 2", got)
	}
}

func TestRateLimitCountsForbiddenAndSkipsUnauthenticated(t *testing.T) {
	e, _ := newLimitedEnv(t, 1, 0)
	member := e.newUser("member@example.com", false)
	r := e.do("GET", "/api/v1/users", member.Token, nil) // instance admins only
	expect(t, r, 403)
	if r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("a 403 of a known token carries X-RateLimit-Remaining %q, want 0", r.Header.Get("X-RateLimit-Remaining"))
	}
	expect(t, e.do("GET", "/api/v1/user", member.Token, nil), 429)

	r = e.do("GET", "/api/v1/user", "", nil)
	expect(t, r, 401)
	if r.Header.Get("X-RateLimit-Limit") != "" {
		t.Error("an unauthenticated response carries rate-limit headers")
	}
	if r := e.do("GET", "/healthz", "", nil); r.Status != 200 {
		t.Errorf("/healthz = %d", r.Status)
	}
}

func TestLoginRateLimitPerAddressAndEmail(t *testing.T) {
	e, clock := newLimitedEnv(t, 0, 2)
	login := func(email, password string) *response {
		return e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": email, "password": password})
	}
	expect(t, login(e.Owner.Email, "wrong-password"), 422)
	r := login(e.Owner.Email, e.Owner.Password)
	expect(t, r, 200)
	if r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("X-RateLimit-Remaining = %q, want 0", r.Header.Get("X-RateLimit-Remaining"))
	}
	// The right password does not get through once the pair is over its limit.
	r = login(e.Owner.Email, e.Owner.Password)
	expect(t, r, 429)
	if headerInt(t, r, "Retry-After") != 60 {
		t.Errorf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	// The email is compared case-insensitively, so case games do not reset the count.
	expect(t, login("OWNER@example.com", e.Owner.Password), 429)

	// Another email from the same address is not affected.
	other := e.newUser("other@example.com", false)
	expect(t, login(other.Email, other.Password), 200)

	// No per-token limit is configured: authenticated responses carry no headers.
	if r := e.do("GET", "/api/v1/user", e.Owner.Token, nil); r.Header.Get("X-RateLimit-Limit") != "" {
		t.Error("rate-limit headers while the per-token limit is off")
	}

	clock.Add(time.Minute)
	expect(t, login(e.Owner.Email, e.Owner.Password), 200)
}

func TestRateLimitOffByDefault(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 20; i++ {
		r := e.do("GET", "/api/v1/user", e.Owner.Token, nil)
		expect(t, r, 200)
		if r.Header.Get("X-RateLimit-Limit") != "" {
			t.Fatal("X-RateLimit-Limit set with no limit configured")
		}
	}
	for i := 0; i < 12; i++ {
		expect(t, e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "nobody@example.com", "password": "password1"}), 422)
	}
}
