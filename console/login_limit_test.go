package console_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/server"
)

// TestConsoleSignInSharesTheLoginLimits: the console's sign-in is the API's login from the
// browser's address, so guessing across made-up emails through the form meets the same
// per-address bound (ten times the per-email limit) as the API, and another address is
// still signed in.
func TestConsoleSignInSharesTheLoginLimits(t *testing.T) {
	e := testenv.Start(t)
	signIn := consoleSignIn(t, cli.NewServerOn(e.DB, cli.NewServices(e.DB), slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(c *server.Config) { c.LoginRateLimit = 1 }).Handler())
	const guesser, perAddress = "203.0.113.7:4000", 10
	for i := range perAddress {
		if code := signIn(guesser, fmt.Sprintf("made-up-%d@example.com", i), "wrong-password"); code != http.StatusUnprocessableEntity {
			t.Fatalf("attempt %d of %d: %d", i+1, perAddress, code)
		}
	}
	if code := signIn(guesser, "made-up-next@example.com", "wrong-password"); code != http.StatusTooManyRequests {
		t.Errorf("past the address's bound: %d, want 429", code)
	}
	if code := signIn("203.0.113.8:4000", e.Owner.Email, e.Owner.Password); code != http.StatusSeeOther {
		t.Errorf("another address signing in: %d, want 303", code)
	}
}

// TestConsoleSignInsFromOneAddressCountOnlyFailures: an office behind one address signs
// in through the console past the address's bound of failures (5 here) as often as its
// people need; failures from it are refused at the sixth.
func TestConsoleSignInsFromOneAddressCountOnlyFailures(t *testing.T) {
	e := testenv.Start(t)
	signIn := consoleSignIn(t, cli.NewServerOn(e.DB, cli.NewServices(e.DB), slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(c *server.Config) { c.LoginRateLimit, c.LoginAddressRateLimit = 100, 5 }).Handler())
	const office = "203.0.113.9:4000"
	for i := range 12 {
		if code := signIn(office, e.Owner.Email, e.Owner.Password); code != http.StatusSeeOther {
			t.Fatalf("sign-in %d of 12 from one address: %d, want 303", i+1, code)
		}
	}
	for i := range 5 {
		if code := signIn(office, fmt.Sprintf("made-up-%d@example.com", i), "wrong-password"); code != http.StatusUnprocessableEntity {
			t.Fatalf("failure %d of 5: %d", i+1, code)
		}
	}
	if code := signIn(office, "made-up-5@example.com", "wrong-password"); code != http.StatusTooManyRequests {
		t.Errorf("the sixth failure: %d, want 429", code)
	}
}

// consoleSignIn returns a function that signs in through h's form from addr, as a
// browser does (the sign-in page's CSRF cookie, then the form), answering the status.
func consoleSignIn(t *testing.T, h http.Handler) func(addr, email, password string) int {
	return func(addr, email, password string) int {
		get := httptest.NewRequest("GET", "/login", nil)
		get.RemoteAddr = addr
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, get)
		cookies := rec.Result().Cookies()
		if len(cookies) == 0 {
			t.Fatal("the sign-in page set no CSRF cookie")
		}
		form := url.Values{"csrf_token": {cookies[0].Value}, "email": {email}, "password": {password}}
		post := httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
		post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		post.AddCookie(cookies[0])
		post.RemoteAddr = addr
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, post)
		return rec.Code
	}
}
