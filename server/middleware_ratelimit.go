package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// rateWindow is the length of a rate-limit window: limits are "requests a minute" (§15).
const rateWindow = time.Minute

// rateLimiter is a fixed-window counter per key, in memory. A fixed window is the simplest
// limiter whose headers are exact: Remaining counts down to 0 and the whole allowance comes
// back at Reset, which is what a client reading X-RateLimit-Reset expects. Its known cost,
// up to twice the limit across a window boundary, is acceptable for abuse protection.
//
// Memory stays bounded: a key whose window has ended carries no information (its next
// request starts a fresh window), so a sweep once a window drops every such key, and the
// map holds at most the keys seen during the last two windows.
type rateLimiter struct {
	limit int
	now   func() time.Time
	// shared, when set, keeps the counts where every replica sees them (windows then
	// start on the minute, so replicas agree on them); the map below is used only while
	// the shared count cannot be written: the replica fenced, or a migration holding the
	// database (allowShared).
	shared data.RateCounter
	log    *slog.Logger

	mu        sync.Mutex
	windows   map[string]*window
	lastSweep time.Time
}

// window is one key's current window.
type window struct {
	start time.Time
	count int
}

// rateDecision is the outcome of one request against a limit, with what its headers say.
type rateDecision struct {
	allowed   bool
	limit     int
	remaining int
	reset     time.Duration // until the window ends
}

// newRateLimiter returns a limiter of limit requests a window; nil when limit is 0 (off).
func newRateLimiter(limit int, now func() time.Time) *rateLimiter {
	if limit <= 0 {
		return nil
	}
	return &rateLimiter{limit: limit, now: now, windows: map[string]*window{}}
}

// allow counts one request for key. A refused request is not counted, so a client that
// keeps retrying too early does not push its own reset further away.
func (l *rateLimiter) allow(ctx context.Context, key string) rateDecision {
	now := l.now()
	if l.shared != nil {
		return l.allowShared(ctx, key, now)
	}
	return l.allowLocal(key, now)
}

// allowLocal is allow on the counts in memory.
func (l *rateLimiter) allowLocal(key string, now time.Time) rateDecision {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= rateWindow {
		for k, w := range l.windows {
			if now.Sub(w.start) >= rateWindow {
				delete(l.windows, k)
			}
		}
		l.lastSweep = now
	}
	w := l.windows[key]
	if w == nil || now.Sub(w.start) >= rateWindow {
		w = &window{start: now}
		l.windows[key] = w
	}
	d := rateDecision{limit: l.limit, reset: w.start.Add(rateWindow).Sub(now)}
	if w.count >= l.limit {
		return d
	}
	w.count++
	d.allowed = true
	d.remaining = l.limit - w.count
	return d
}

// allowShared is allow on the cluster's counts. When they cannot be read the request
// goes through, logged: refusing every request while the database is away would turn
// an outage of the counter into an outage of the API, and the request that follows
// needs the database anyway.
func (l *rateLimiter) allowShared(ctx context.Context, key string, now time.Time) rateDecision {
	start := now.Truncate(rateWindow)
	d := rateDecision{limit: l.limit, reset: start.Add(rateWindow).Sub(now)}
	count, added, err := l.shared.CountRequest(ctx, key, start, l.limit)
	if errors.Is(err, data.ErrStorageSuperseded) || errors.Is(err, data.ErrCountBusy) {
		// A replica a newer binary's migration fenced writes no count (postgres/fence.go)
		// but still serves reads until it is replaced, and a count does not wait for a
		// migration under way: the request is limited by this replica's own counts,
		// quietly (the fence is logged once; a migration is no failure).
		return l.allowLocal(key, now)
	}
	if err != nil {
		l.log.Warn("rate limit: counting in the database failed; the request is let through", "error", err)
		d.allowed, d.remaining = true, l.limit
		return d
	}
	d.allowed, d.remaining = added, max(l.limit-count, 0)
	return d
}

// size returns the number of keys held (tests check eviction).
func (l *rateLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.windows)
}

// ceilSeconds rounds d up to whole seconds, at least 1: a client told "0" would retry at
// once and be refused again.
func ceilSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

// apply writes the X-RateLimit-* headers and, when the request is refused, Retry-After
// and the rate_limited error. X-RateLimit-Reset is the number of seconds until the window
// resets (not a unix time): it needs no clock agreement between client and server, and it
// matches Retry-After.
func (d rateDecision) apply(w http.ResponseWriter) error {
	h := w.Header()
	reset := strconv.Itoa(ceilSeconds(d.reset))
	h.Set("X-RateLimit-Limit", strconv.Itoa(d.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(d.remaining))
	h.Set("X-RateLimit-Reset", reset)
	if d.allowed {
		return nil
	}
	h.Set("Retry-After", reset)
	return data.Errorf(data.ERATELIMITED, "Too many requests: the limit is %d a minute. Retry in %s seconds.", d.limit, reset)
}

// limitToken counts a request of an authenticated token (conventions §15).
func (s *Server) limitToken(w http.ResponseWriter, r *http.Request, p *data.Principal) error {
	if s.tokenLimit == nil {
		return nil
	}
	return s.tokenLimit.allow(r.Context(), "t"+strconv.FormatInt(p.TokenID, 10)).apply(w)
}

// loginAddressFactor is how many times the per-email login limit one client address may
// attempt across all emails: an unknown email costs a full password hash (so as not to
// tell which emails have accounts), and without this bound one address could spend the
// server's CPU at the per-email rate times as many made-up emails as it likes. Ten times
// leaves an office behind one NAT address room for its people's logins.
const loginAddressFactor = 10

// limitLogin counts a login attempt for the pair of client address and email, so that
// guessing one account's password is slow while other users of the same address (an
// office behind NAT) keep logging in, and for the address alone at loginAddressFactor
// times that, so that guessing across many emails is slow too. The address is
// clientAddr's: the TCP peer, or what a trusted proxy forwarded, never a header a client
// could forge to escape the limit.
func (s *Server) limitLogin(w http.ResponseWriter, r *http.Request, email string) error {
	if s.loginLimit == nil {
		return nil
	}
	if err := s.loginLimit.allow(r.Context(), s.loginKey(r, email)).apply(w); err != nil {
		return err
	}
	return s.limitLoginAddress(w, r)
}

// limitLoginAddress counts an attempt against the client address's own login allowance;
// only a refusal sets the rate-limit headers (the pair's are the ones a client reads).
func (s *Server) limitLoginAddress(w http.ResponseWriter, r *http.Request) error {
	if d := s.loginAddrLimit.allow(r.Context(), "a"+s.loginHost(r)); !d.allowed {
		return d.apply(w)
	}
	return nil
}

// limitPasswordGuess counts a password change's current_password as a login attempt of
// the account's email from the caller's address: a guess at the password either way, and
// a stolen token must not guess at its own rate, thirty times login's. Only a refusal
// sets the rate-limit headers; the token's stay otherwise.
func (s *Server) limitPasswordGuess(w http.ResponseWriter, r *http.Request, email string) error {
	if s.loginLimit == nil {
		return nil
	}
	if d := s.loginLimit.allow(r.Context(), s.loginKey(r, email)); !d.allowed {
		return d.apply(w)
	}
	return s.limitLoginAddress(w, r)
}

func (s *Server) loginKey(r *http.Request, email string) string {
	return "l" + s.loginHost(r) + "|" + strings.ToLower(strings.TrimSpace(email))
}

// loginHost is the client address logins are counted for.
func (s *Server) loginHost(r *http.Request) string {
	if host := data.ClientAddress(r.Context()); host != "" {
		return host
	}
	return s.clientAddr(r)
}
