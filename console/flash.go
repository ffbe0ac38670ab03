package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"

	"golang.org/x/crypto/chacha20poly1305"
)

// Post-redirect-get (docs/dashboard.md, "Shared patterns"). Every form's successful POST
// answers 303 to a page, so that a reload repeats a GET, never the POST. What the POST has
// to say on that page (a notice, and a token or signing secret the API returns only once)
// travels in a flash cookie: sealed with a key derived from the session's token, so that
// only this session can read it; HttpOnly, SameSite=Strict, limited to the page it is
// for, living two minutes, and cleared by that page's first rendering. The secret is
// shown once, as the API returns it once, and no server state is kept: any replica
// serves the redirect.

const (
	flashCookie = "voiceapi_flash"
	flashMaxAge = 120 // seconds: a redirect is followed at once
	// maxFlashValue keeps the cookie under the 4096 bytes browsers store per cookie, with
	// its name and attributes.
	maxFlashValue = 3800
)

// flash is what a POST hands to the page its redirect opens.
type flash struct {
	// Path is the page the flash is for: another page (another tab) leaves it alone.
	Path   string `json:"p"`
	Notice string `json:"n,omitempty"`
	// At is the id of the element the notice shows beside (the form that acted); empty
	// shows it at the top of the page.
	At      string   `json:"a,omitempty"`
	Secrets []secret `json:"s,omitempty"`
}

// secret is a value shown once, with what it is.
type secret struct {
	Label string `json:"l"`
	Value string `json:"v"`
}

// flashKey derives the flash cookie's key from the session's token (a different domain
// from the CSRF token's hash, so neither tells anything of the other).
func flashKey(session string) []byte {
	mac := hmac.New(sha256.New, []byte(session))
	mac.Write([]byte("voiceapi console flash"))
	return mac.Sum(nil)
}

// done ends a successful POST: it keeps f for the page at path and redirects there with
// 303 (to the element f.At names). It reports false, having written nothing, when f is
// too big for a cookie (an import's many secrets): the caller then shows it at once.
func (h *Handler) done(w http.ResponseWriter, r *http.Request, path string, f flash) bool {
	return h.doneFor(w, r, SessionToken(r), path, f)
}

// doneFor is done for a session whose token the response itself sets (a switch of
// workspace signs in again).
func (h *Handler) doneFor(w http.ResponseWriter, r *http.Request, session, path string, f flash) bool {
	target, err := url.Parse(path)
	if err != nil {
		panic("console: a redirect to " + path) // the pages build these paths
	}
	f.Path = target.Path
	if f.Notice != "" || len(f.Secrets) > 0 {
		value, err := sealFlash(session, f)
		if err != nil || len(value) > maxFlashValue {
			return false
		}
		http.SetCookie(w, &http.Cookie{
			Name: flashCookie, Value: value, Path: f.Path, MaxAge: flashMaxAge, HttpOnly: true,
			Secure: h.secure(r), SameSite: http.SameSiteStrictMode,
		})
	}
	if f.At != "" {
		target.Fragment = f.At
	}
	http.Redirect(w, r, target.String(), http.StatusSeeOther)
	return true
}

// takeFlash returns the flash kept for this page, clearing it, or nil.
func (h *Handler) takeFlash(w http.ResponseWriter, r *http.Request) *flash {
	session := SessionToken(r)
	if session == "" {
		return nil
	}
	for _, c := range r.Cookies() {
		if c.Name != flashCookie {
			continue
		}
		f, err := openFlash(session, c.Value)
		if err != nil || f.Path != r.URL.Path {
			continue
		}
		http.SetCookie(w, &http.Cookie{
			Name: flashCookie, Value: "", Path: f.Path, MaxAge: -1, HttpOnly: true,
			Secure: h.secure(r), SameSite: http.SameSiteStrictMode,
		})
		return f
	}
	return nil
}

func sealFlash(session string, f flash) (string, error) {
	aead, err := chacha20poly1305.NewX(flashKey(session))
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(f)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, nil)), nil
}

func openFlash(session, value string) (*flash, error) {
	aead, err := chacha20poly1305.NewX(flashKey(session))
	if err != nil {
		return nil, err
	}
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) < aead.NonceSize() {
		return nil, errBadFlash
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], nil)
	if err != nil {
		return nil, err
	}
	var f flash
	if err := json.Unmarshal(plain, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

type flashError string

func (e flashError) Error() string { return string(e) }

const errBadFlash = flashError("console: a flash cookie that is not ours")
