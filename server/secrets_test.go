package server_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/bolt"
)

// No token secret or password is ever written in plaintext: not in the database file, not
// in the logs, whatever path created it (login, API key, idempotent replay, CLI helper).
func TestNoPlaintextSecrets(t *testing.T) {
	e := newEnv(t)
	var secrets []string
	addToken := func(tok string) {
		_, secret, ok := strings.Cut(tok, "|")
		if !ok || len(secret) < 40 {
			t.Fatalf("token %q", tok)
		}
		secrets = append(secrets, secret)
	}
	addToken(e.Owner.Token)
	secrets = append(secrets, e.Owner.Password)

	r := e.do("POST", "/api/v1/users", e.Owner.Token, map[string]any{"name": "Uma", "email": "uma@example.com", "password": "uma-secret-password"})
	expect(t, r, 201)
	secrets = append(secrets, "uma-secret-password")
	login := e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "uma@example.com", "password": "uma-secret-password"})
	expect(t, login, 200)
	umaTok := login.JSON()["token"].(string)
	addToken(umaTok)
	r = e.do("PUT", "/api/v1/user", umaTok, map[string]any{"password": "uma-new-password", "current_password": "uma-secret-password"})
	expect(t, r, 200)
	secrets = append(secrets, "uma-new-password")
	k := e.do("POST", "/api/v1/api-keys", umaTok, map[string]any{"name": "plain"})
	expect(t, k, 201)
	addToken(k.JSON()["token"].(string))
	// A create under an Idempotency-Key keeps its response for replay: the token in it
	// must not be kept in plaintext either.
	k = e.do("POST", "/api/v1/api-keys", umaTok, map[string]any{"name": "retried"}, "Idempotency-Key", "key-create-1")
	expect(t, k, 201)
	addToken(k.JSON()["token"].(string))
	replay := e.do("POST", "/api/v1/api-keys", umaTok, map[string]any{"name": "retried"}, "Idempotency-Key", "key-create-1")
	expect(t, replay, 201)
	if replay.JSON()["token"] != k.JSON()["token"] {
		t.Errorf("replay lost the token: %s", replay.Body)
	}
	expect(t, e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "uma@example.com", "password": "wrong-password-zz"}), 422)
	secrets = append(secrets, "wrong-password-zz")
	expect(t, e.do("GET", "/api/v1/user", "", nil, "Authorization", "Bearer 1|"+strings.Repeat("Z", 48)), 401)
	secrets = append(secrets, strings.Repeat("Z", 48))

	// Flush last_used_at and every page to the file.
	dir := e.Dir
	check := func(what string, content []byte) {
		for _, s := range secrets {
			if bytes.Contains(content, []byte(s)) {
				t.Errorf("%s contains the secret %q", what, s)
			}
		}
	}
	check("the logs", []byte(e.Logs.String()))
	if err := e.bolt().Bolt().Sync(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, bolt.FileName))
	if err != nil {
		t.Fatal(err)
	}
	check("the database file", raw)
	// JSON stores []byte as base64: decode every such string in every value too.
	var decoded []byte
	err = e.bolt().Bolt().View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				for _, m := range base64String.FindAllSubmatch(v, -1) {
					if d, err := base64.StdEncoding.DecodeString(string(m[1])); err == nil {
						decoded = append(decoded, d...)
					}
				}
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	check("base64 values in the database", decoded)
}

var base64String = regexp.MustCompile(`"([A-Za-z0-9+/]{16,}={0,2})"`)
