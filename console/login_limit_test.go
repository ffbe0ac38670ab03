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
	h := cli.NewServerOn(e.DB, cli.NewServices(e.DB), slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(c *server.Config) { c.LoginRateLimit = 1 }).Handler()
	signIn := func(addr, email, password string) int {
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
