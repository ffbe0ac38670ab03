package server_test

import (
	"testing"
)

// TestSpecLoginNeedsNoAuthorization: "Login needs no Authorization header"
// (Authentication 3). A client whose stored token expired or was revoked may still send
// it when it logs in again: the header is ignored, not refused.
func TestSpecLoginNeedsNoAuthorization(t *testing.T) {
	e := newEnv(t)
	creds := map[string]any{"email": e.Owner.Email, "password": e.Owner.Password}
	r := e.do("POST", "/api/v1/auth/login", "", creds)
	expect(t, r, 200)
	revoked := r.JSON()["token"].(string)
	expect(t, e.do("POST", "/api/v1/auth/logout", revoked, nil), 204)
	for _, header := range []string{"Bearer " + revoked, "Bearer garbage", "Basic b3duZXI6cHc="} {
		r := e.do("POST", "/api/v1/auth/login", "", creds, "Authorization", header)
		expect(t, r, 200)
		if tok, _ := r.JSON()["token"].(string); tok == "" {
			t.Errorf("login with Authorization %q gave no token: %s", header, r.Body)
		}
	}
}
