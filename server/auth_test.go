package server_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
)

func TestLogin(t *testing.T) {
	e := newEnv(t)
	u := e.newUser("ann@example.com", false)
	other := e.newUser("bob@example.com", false)

	r := e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "ANN@example.com", "password": u.Password})
	expect(t, r, 200)
	d := r.Data()
	if d["name"] != "login" || d["token"] != nil || d["expires_at"] == nil || d["created_at"] == nil {
		t.Errorf("login data is not an API key record named login: %s", r.Body)
	}
	if _, ok := d["id"].(float64); !ok {
		t.Errorf("login id is not an integer: %s", r.Body)
	}
	tok, _ := r.JSON()["token"].(string)
	if !strings.HasPrefix(tok, strconv.Itoa(int(d["id"].(float64)))+"|") || len(tok) < 42 {
		t.Errorf("token %q is not <id>|<secret>", tok)
	}
	if r.Header.Get("ETag") == "" {
		t.Error("no ETag on the login record")
	}
	me := e.do("GET", "/api/v1/user", tok, nil)
	expect(t, me, 200)
	if me.Data()["current_workspace_id"] != u.WorkspaceID || me.Data()["id"] != u.ID {
		t.Errorf("login token not bound to the personal workspace: %s", me.Body)
	}
	// A login token expires after the login TTL (30 days by default).
	exp, _ := time.Parse(time.RFC3339, d["expires_at"].(string))
	if got := time.Until(exp); got < 719*time.Hour || got > 721*time.Hour {
		t.Errorf("login token lives %v, want 720h", got)
	}

	// With workspace_id: a workspace the user belongs to.
	ws := e.do("POST", "/api/v1/workspaces", u.Token, map[string]any{"name": "team"})
	expect(t, ws, 201)
	wsID := ws.Data()["id"].(string)
	r = e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": u.Email, "password": u.Password, "workspace_id": wsID})
	expect(t, r, 200)
	me = e.do("GET", "/api/v1/user", r.JSON()["token"].(string), nil)
	if me.Data()["current_workspace_id"] != wsID {
		t.Errorf("login with workspace_id bound to %v", me.Data()["current_workspace_id"])
	}

	// Every refusal is the same 422 on email.
	var first string
	for i, body := range []map[string]any{
		{"email": "nobody@example.com", "password": "password-x"},
		{"email": u.Email, "password": "wrong-password"},
		{"email": u.Email, "password": u.Password, "workspace_id": other.WorkspaceID},
		{"email": u.Email, "password": u.Password, "workspace_id": "ws_nonexistent"},
	} {
		r := e.do("POST", "/api/v1/auth/login", "", body)
		expectFields(t, r, "email")
		if i == 0 {
			first = string(r.Body)
		} else if string(r.Body) != first {
			t.Errorf("refusal %d differs: %s vs %s", i, r.Body, first)
		}
	}
	expectFields(t, e.do("POST", "/api/v1/auth/login", "", map[string]any{}), "email", "password")
	expectFields(t, e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "a@b.co", "password": "x", "remember": true}), "remember")
}

func TestLoginTTL(t *testing.T) {
	e := newEnvWith(t, func(o *bolt.Options) { o.LoginTTL = time.Hour })
	r := e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.Owner.Email, "password": e.Owner.Password})
	expect(t, r, 200)
	exp, _ := time.Parse(time.RFC3339, r.Data()["expires_at"].(string))
	if got := time.Until(exp); got > time.Hour || got < 59*time.Minute {
		t.Errorf("login token lives %v, want 1h", got)
	}
}

func TestLogout(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.Owner.Email, "password": e.Owner.Password})
	tok := r.JSON()["token"].(string)
	expect(t, e.do("GET", "/api/v1/user", tok, nil), 200)
	r = e.do("POST", "/api/v1/auth/logout", tok, nil)
	expect(t, r, 204)
	if len(r.Body) != 0 {
		t.Errorf("204 with a body: %q", r.Body)
	}
	r = e.do("GET", "/api/v1/user", tok, nil)
	expect(t, r, 401)
	expect(t, e.do("POST", "/api/v1/auth/logout", tok, nil), 401)
	// Other tokens of the user are untouched.
	expect(t, e.do("GET", "/api/v1/user", e.Owner.Token, nil), 200)
}

func TestUnauthenticated(t *testing.T) {
	var offset atomic.Int64
	e := newEnvWith(t, func(o *bolt.Options) {
		o.Now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	})
	ctx := context.Background()
	u, _ := cli.NewServices(e.DB).Users.UserByEmail(ctx, e.Owner.Email)
	tomorrow := time.Now().UTC().AddDate(0, 0, 2).Format("2006-01-02")
	_, expiring, err := cli.NewServices(e.DB).Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "short", Expiration: &tomorrow})
	if err != nil {
		t.Fatal(err)
	}
	created := e.do("POST", "/api/v1/api-keys", e.Owner.Token, map[string]any{"name": "to revoke"})
	expect(t, created, 201)
	revoked := created.JSON()["token"].(string)
	expect(t, e.do("DELETE", fmt.Sprintf("/api/v1/api-keys/%v", created.Data()["id"]), e.Owner.Token, nil), 204)

	id, secret, _ := strings.Cut(e.Owner.Token, "|")
	cases := map[string]string{
		"missing":          "",
		"empty bearer":     "Bearer ",
		"basic scheme":     "Basic " + e.Owner.Token,
		"no separator":     "Bearer " + id + secret,
		"bad id":           "Bearer abc|" + secret,
		"zero id":          "Bearer 0|" + secret,
		"unknown id":       "Bearer 999999|" + secret,
		"wrong secret":     "Bearer " + id + "|" + strings.Repeat("A", len(secret)),
		"empty secret":     "Bearer " + id + "|",
		"revoked":          "Bearer " + revoked,
		"expired (future)": "Bearer " + expiring,
	}
	for name, header := range cases {
		t.Run(name, func(t *testing.T) {
			if name == "expired (future)" {
				offset.Store(int64(3 * 24 * time.Hour))
				defer offset.Store(0)
			}
			r := e.do("GET", "/api/v1/user", "", nil, "Authorization", header)
			expect(t, r, 401)
			if r.Code() != "unauthenticated" {
				t.Errorf("code %q", r.Code())
			}
			if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
			}
		})
	}
	// Before the expiry the key works; the lower-case scheme is accepted too.
	expect(t, e.do("GET", "/api/v1/user", "", nil, "Authorization", "bearer "+expiring), 200)
}

func TestAPIKeys(t *testing.T) {
	e := newEnv(t)
	id, newTok := createCIKey(t, e)
	checkKeyExpirations(t, e)
	other := e.newUser("other@example.com", false)
	checkOwnKeysListed(t, e, other)
	checkKeyDeleted(t, e, id, newTok, other)
}

// createCIKey creates the owner's key "ci" and checks its record, its workspace and its
// secret. It returns its id and token.
func createCIKey(t *testing.T, e *env) (id, newTok string) {
	t.Helper()
	tok := e.Owner.Token
	r := e.do("POST", "/api/v1/api-keys", tok, map[string]any{"name": "ci"})
	expect(t, r, 201)
	d := r.Data()
	for _, f := range []string{"id", "name", "token", "created_at", "expires_at"} {
		if _, ok := d[f]; !ok {
			t.Errorf("api key lacks %s: %s", f, r.Body)
		}
	}
	if d["token"] != nil || d["expires_at"] != nil || d["name"] != "ci" {
		t.Errorf("api key record: %s", r.Body)
	}
	if r.Header.Get("ETag") == "" {
		t.Error("no ETag")
	}
	newTok, _ = r.JSON()["token"].(string)
	me := e.do("GET", "/api/v1/user", newTok, nil)
	expect(t, me, 200)
	if me.Data()["current_workspace_id"] != e.Owner.WorkspaceID {
		t.Errorf("a key acts in the workspace of the token that made it: %s", me.Body)
	}
	if len(strings.SplitN(newTok, "|", 2)[1]) < 40 {
		t.Errorf("secret shorter than 40: %q", newTok)
	}
	return fmt.Sprint(d["id"]), newTok
}

// checkKeyExpirations checks expiration: a future date → that day at 00:00:00Z, null
// taken, and bad dates and names refused.
func checkKeyExpirations(t *testing.T, e *env) {
	t.Helper()
	tok := e.Owner.Token
	future := time.Now().UTC().AddDate(0, 1, 0).Format("2006-01-02")
	r := e.do("POST", "/api/v1/api-keys", tok, map[string]any{"name": "monthly", "expiration": future})
	expect(t, r, 201)
	if r.Data()["expires_at"] != future+"T00:00:00.000Z" {
		t.Errorf("expires_at = %v, want %sT00:00:00.000Z", r.Data()["expires_at"], future)
	}
	expect(t, e.do("POST", "/api/v1/api-keys", tok, map[string]any{"name": "n", "expiration": nil}), 201)
	today := time.Now().UTC().Format("2006-01-02")
	for _, bad := range []any{"2020-01-01", today, "2030-13-01", "2030-02-30", "2030-1-1", "tomorrow", "2030-01-01T00:00:00Z", 20300101} {
		expectFields(t, e.do("POST", "/api/v1/api-keys", tok, map[string]any{"name": "n", "expiration": bad}), "expiration")
	}
	expectFields(t, e.do("POST", "/api/v1/api-keys", tok, map[string]any{}), "name")
	expectFields(t, e.do("POST", "/api/v1/api-keys", tok, map[string]any{"name": strings.Repeat("k", 256), "expiration": "bad"}), "name", "expiration")
	expect(t, e.do("POST", "/api/v1/api-keys", tok, map[string]any{"name": strings.Repeat("k", 255)}), 201)
}

// checkOwnKeysListed checks the list holds the caller's own keys only, not login
// tokens, newest first.
func checkOwnKeysListed(t *testing.T, e *env, other *testUser) {
	t.Helper()
	tok := e.Owner.Token
	e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": e.Owner.Email, "password": e.Owner.Password})
	l := e.do("GET", "/api/v1/api-keys", tok, nil)
	expect(t, l, 200)
	keys := l.List()
	if len(keys) != 5 { // "test" from newEnv, ci, monthly, n, 255 k's
		t.Fatalf("%d keys: %s", len(keys), l.Body)
	}
	var prev float64 = 1 << 50
	for _, k := range keys {
		m := k.(map[string]any)
		if _, ok := m["last_used_at"]; !ok {
			t.Errorf("no last_used_at: %v", m)
		}
		if m["token"] != nil || m["name"] == "login" {
			t.Errorf("list shows %v", m)
		}
		if id := m["id"].(float64); id >= prev {
			t.Errorf("not newest first: %v after %v", id, prev)
		} else {
			prev = id
		}
	}
	if meta := l.Meta(); meta["per_page"] != float64(15) || meta["next_cursor"] != nil || meta["prev_cursor"] != nil {
		t.Errorf("meta %v", meta)
	}
	if n := len(e.do("GET", "/api/v1/api-keys", other.Token, nil).List()); n != 1 {
		t.Errorf("other user sees %d keys", n)
	}
}

// checkKeyDeleted deletes the key id: 204, then the key is 401; another user's key and
// unknown ids are 404.
func checkKeyDeleted(t *testing.T, e *env, id, newTok string, other *testUser) {
	t.Helper()
	tok := e.Owner.Token
	expect(t, e.do("DELETE", "/api/v1/api-keys/"+id, other.Token, nil), 404)
	expect(t, e.do("GET", "/api/v1/user", newTok, nil), 200)
	r := e.do("DELETE", "/api/v1/api-keys/"+id, tok, nil)
	expect(t, r, 204)
	expect(t, e.do("GET", "/api/v1/user", newTok, nil), 401)
	for _, bad := range []string{id, "0", "-1", "abc", "99999"} {
		expect(t, e.do("DELETE", "/api/v1/api-keys/"+bad, tok, nil), 404)
	}
}
