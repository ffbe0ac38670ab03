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
	// start and shared name the window that counted an allowed request, and whether in
	// the cluster's counts, for refund.
	start  time.Time
	shared bool
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
	d := rateDecision{limit: l.limit, reset: w.start.Add(rateWindow).Sub(now), start: w.start}
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
	d.start, d.shared = start, added
	return d
}

// refund takes back the request d counted for key: it turned out not to be what the
// limit bounds (a login that succeeded, against the per-address bound of failures).
// Counting first and refunding after, rather than checking first and counting after,
// keeps the bound exact under concurrency: attempts in flight hold their place, so a
// thousand sent at once are not all let through by a count that none has raised yet.
// A refund that cannot be written leaves the request counted, the safe side.
func (l *rateLimiter) refund(ctx context.Context, key string, d rateDecision) {
	if !d.allowed {
		return
	}
	if d.shared {
		err := l.shared.UncountRequest(ctx, key, d.start)
		if err != nil && !errors.Is(err, data.ErrStorageSuperseded) && !errors.Is(err, data.ErrCountBusy) {
			l.log.Warn("rate limit: taking back a count in the database failed; the request stays counted", "error", err)
		}
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := l.windows[key]; w != nil && w.start.Equal(d.start) && w.count > 0 {
		w.count--
	}
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

// LoginAddressFactor is how many times the per-email login limit one client address may
// fail across all emails unless configured (Config.LoginAddressRateLimit): an unknown
// email costs a full password hash (so as not to tell which emails have accounts), and
// without this bound one address could spend the server's CPU at the per-email rate
// times as many made-up emails as it likes.
const LoginAddressFactor = 10

// loginAttempt is a login attempt let through the login limits: the address's count
// to take back unless the attempt turns out a refusal of credentials (finish).
type loginAttempt struct {
	s    *Server
	key  string
	addr rateDecision
}

// limitLogin counts a login attempt for the pair of client address and email, so that
// guessing one account's password is slow while other users of the same address (an
// office behind NAT) keep logging in, and for the address alone, across all emails, so
// that guessing across many emails is slow too. The address's count keeps only failed
// attempts: finish takes back any other. The address is clientAddr's: the TCP peer, or
// what a trusted proxy forwarded, never a header a client could forge to escape the
// limit. The pair's headers are the ones a client reads; the address's only on refusal.
func (s *Server) limitLogin(w http.ResponseWriter, r *http.Request, email string) (*loginAttempt, error) {
	if s.loginLimit != nil {
		if err := s.loginLimit.allow(r.Context(), s.loginKey(r, email)).apply(w); err != nil {
			return nil, err
		}
	}
	return s.limitLoginAddress(w, r)
}

// limitLoginAddress counts an attempt against the client address's allowance of failures.
func (s *Server) limitLoginAddress(w http.ResponseWriter, r *http.Request) (*loginAttempt, error) {
	if s.loginAddrLimit == nil {
		return nil, nil
	}
	a := &loginAttempt{s: s, key: "a" + s.loginHost(r)}
	if a.addr = s.loginAddrLimit.allow(r.Context(), a.key); !a.addr.allowed {
		return nil, a.addr.apply(w)
	}
	return a, nil
}

// finish keeps the attempt in its address's count when err refused the credentials
// (data.ErrCredentialsRefused) and takes it back otherwise. Nil-safe: no limit, no count.
func (a *loginAttempt) finish(ctx context.Context, err error) {
	if a == nil || errors.Is(err, data.ErrCredentialsRefused) {
		return
	}
	// The request's own context may be cancelled once the answer is decided; the refund
	// is owed anyway.
	a.s.loginAddrLimit.refund(context.WithoutCancel(ctx), a.key, a.addr)
}

// limitPasswordGuess counts a password change's current_password as a login attempt of
// the account's email from the caller's address: a guess at the password either way, and
// a stolen token must not guess at its own rate, thirty times login's. Only a refusal
// sets the rate-limit headers; the token's stay otherwise.
func (s *Server) limitPasswordGuess(w http.ResponseWriter, r *http.Request, email string) (*loginAttempt, error) {
	if s.loginLimit != nil {
		if d := s.loginLimit.allow(r.Context(), s.loginKey(r, email)); !d.allowed {
			return nil, d.apply(w)
		}
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
