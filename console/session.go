package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
)

// Cookie and header names of the console's session.
const (
	// SessionCookie holds the login token the console signed in with; HttpOnly, so page
	// scripts never see it.
	SessionCookie = "voiceapi_session"
	// CSRFHeader carries the session's CSRF token on the browser's API calls.
	CSRFHeader = "X-CSRF-Token"
	// csrfField is the CSRF token's form field on the console's own forms.
	csrfField = "csrf_token"
	// loginCSRFCookie is the double-submit cookie of the sign-in form, which has no
	// session to bind a token to yet.
	loginCSRFCookie = "voiceapi_login_csrf"
)

// SessionToken returns the login token of r's session cookie, "" when there is none.
func SessionToken(r *http.Request) string {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return ""
	}
	return c.Value
}

// CSRFToken derives the CSRF token of a session from its login token: a hash, so that a
// page may show it without showing the token, and no state is kept. Knowing it gives
// nothing towards the token itself.
func CSRFToken(session string) string {
	sum := sha256.Sum256([]byte("voiceapi console csrf\x00" + session))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// ValidCSRF reports whether r carries the CSRF token of session, in the X-CSRF-Token
// header or the csrf_token form field.
func ValidCSRF(r *http.Request, session string) bool {
	got := r.Header.Get(CSRFHeader)
	if got == "" && r.Header.Get("Content-Type") == "application/x-www-form-urlencoded" {
		got = r.PostFormValue(csrfField)
	}
	return validFieldCSRF(got, session)
}

// validFieldCSRF checks a CSRF token read from a form (a multipart form's field, which
// ValidCSRF does not parse) against session's.
func validFieldCSRF(got, session string) bool {
	want := CSRFToken(session)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// SafeMethod reports whether method cannot change state (RFC 9110 §9.2.1), so needs no
// CSRF token.
func SafeMethod(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// setSession stores token in the session cookie. Secure follows the request's scheme;
// SameSite=Strict keeps other sites' links and forms from carrying it.
func setSession(w http.ResponseWriter, r *http.Request, secure func(*http.Request) bool, token string) {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: token, Path: "/", HttpOnly: true,
		Secure: secure(r), SameSite: http.SameSiteStrictMode,
	})
}

// clearCookie removes a cookie from the browser.
func clearCookie(w http.ResponseWriter, r *http.Request, secure func(*http.Request) bool, name string) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: secure(r), SameSite: http.SameSiteStrictMode,
	})
}

// loginCSRF returns the sign-in form's double-submit token, setting its cookie when r
// has none.
func loginCSRF(w http.ResponseWriter, r *http.Request, secure func(*http.Request) bool) string {
	if c, err := r.Cookie(loginCSRFCookie); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	var b [32]byte
	rand.Read(b[:])
	v := base64.RawURLEncoding.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{
		Name: loginCSRFCookie, Value: v, Path: "/", HttpOnly: true,
		Secure: secure(r), SameSite: http.SameSiteStrictMode,
	})
	return v
}

// validLoginCSRF checks the sign-in form's field against its cookie.
func validLoginCSRF(r *http.Request) bool {
	c, err := r.Cookie(loginCSRFCookie)
	if err != nil || len(c.Value) < 32 {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue(csrfField))) == 1
}
