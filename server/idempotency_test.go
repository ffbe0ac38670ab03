package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestIdempotentCreates(t *testing.T) {
	e := newEnv(t)
	other := e.newUser("vic@example.com", false)
	tok := e.Owner.Token
	ws := e.Owner.WorkspaceID
	cases := []struct {
		name, path  string
		body, body2 map[string]any
		count       func() int
	}{
		{"workspace", "/api/v1/workspaces", map[string]any{"name": "once"}, map[string]any{"name": "twice"},
			func() int { return len(e.do("GET", "/api/v1/workspaces?per_page=100", tok, nil).List()) }},
		{"api key", "/api/v1/api-keys", map[string]any{"name": "once"}, map[string]any{"name": "twice"},
			func() int { return len(e.do("GET", "/api/v1/api-keys?per_page=100", tok, nil).List()) }},
		{"workspace user", "/api/v1/workspaces/" + ws + "/users", map[string]any{"id": other.ID, "role": "member"}, map[string]any{"id": other.ID, "role": "admin"},
			func() int { return len(e.do("GET", "/api/v1/workspaces/"+ws+"/users", tok, nil).List()) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := "idem-" + c.name
			n := c.count()
			first := e.do("POST", c.path, tok, c.body, "Idempotency-Key", key)
			expect(t, first, 201)
			if first.Header.Get("Idempotent-Replayed") != "" {
				t.Error("first response marked replayed")
			}
			again := e.do("POST", c.path, tok, c.body, "Idempotency-Key", key)
			expect(t, again, 201)
			if string(again.Body) != string(first.Body) || again.Header.Get("ETag") != first.Header.Get("ETag") || again.Header.Get("ETag") == "" {
				t.Errorf("replay differs:\n%s %s\n%s %s", first.Body, first.Header.Get("ETag"), again.Body, again.Header.Get("ETag"))
			}
			if again.Header.Get("Idempotent-Replayed") != "true" || again.Header.Get("Content-Type") != "application/json" {
				t.Errorf("replay headers %v", again.Header)
			}
			if got := c.count(); got != n+1 {
				t.Errorf("%d records after a retried create, want %d", got, n+1)
			}
			// Another body under the same key: 422 naming the header.
			expectFields(t, e.do("POST", c.path, tok, c.body2, "Idempotency-Key", key), "Idempotency-Key")
			if got := c.count(); got != n+1 {
				t.Errorf("%d records, want %d", got, n+1)
			}
		})
	}

	// Keys are per token: the same key from another token is a new request.
	r1 := e.do("POST", "/api/v1/workspaces", tok, map[string]any{"name": "scoped"}, "Idempotency-Key", "shared-key")
	r2 := e.do("POST", "/api/v1/workspaces", other.Token, map[string]any{"name": "scoped"}, "Idempotency-Key", "shared-key")
	expect(t, r1, 201)
	expect(t, r2, 201)
	if r1.Data()["id"] == r2.Data()["id"] || r2.Header.Get("Idempotent-Replayed") != "" {
		t.Error("a key was shared across tokens")
	}

	// A failed first attempt is not kept: the corrected retry with the same key runs.
	expectFields(t, e.do("POST", "/api/v1/workspaces", tok, map[string]any{"name": ""}, "Idempotency-Key", "fix-me"), "name")
	expectFields(t, e.do("POST", "/api/v1/workspaces", tok, map[string]any{"name": ""}, "Idempotency-Key", "fix-me"), "name")
	r := e.do("POST", "/api/v1/workspaces", tok, map[string]any{"name": "fixed"}, "Idempotency-Key", "fix-me")
	expect(t, r, 201)
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Error("replayed a failure")
	}
	// An over-long key is refused.
	long := make([]byte, 256)
	for i := range long {
		long[i] = 'k'
	}
	expectFields(t, e.do("POST", "/api/v1/workspaces", tok, map[string]any{"name": "x"}, "Idempotency-Key", string(long)), "Idempotency-Key")
}

func TestIdempotentConcurrent(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	before := len(e.do("GET", "/api/v1/workspaces", tok, nil).List())
	const n = 20
	var wg sync.WaitGroup
	results := make([]*response, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.do("POST", "/api/v1/workspaces", tok, map[string]any{"name": "race"}, "Idempotency-Key", "race-key")
		}()
	}
	wg.Wait()
	var created string
	for _, r := range results {
		switch {
		case r.Status == 201 && r.Header.Get("Idempotent-Replayed") == "":
			if created != "" {
				t.Errorf("two requests created: %s and %s", created, r.Body)
			}
			created = string(r.Body)
		case r.Status == 201 || r.Status == 409:
		default:
			t.Errorf("unexpected %d %s", r.Status, r.Body)
		}
	}
	for _, r := range results {
		if r.Status == 201 && string(r.Body) != created {
			t.Errorf("replay %s differs from %s", r.Body, created)
		}
		if r.Status == 409 {
			expect(t, r, 409)
		}
	}
	if got := len(e.do("GET", "/api/v1/workspaces", tok, nil).List()); got != before+1 {
		t.Errorf("%d workspaces, want %d", got, before+1)
	}
}

func TestIfMatch(t *testing.T) {
	e := newEnv(t)
	owner := e.Owner.Token
	member := e.newUser("wes@example.com", false)
	created := e.do("POST", "/api/v1/workspaces", owner, map[string]any{"name": "v1"})
	ws := created.Data()["id"].(string)
	wsPath := "/api/v1/workspaces/" + ws
	v1 := created.Header.Get("ETag")
	if len(v1) < 3 || v1[0] != '"' {
		t.Fatalf("ETag %q is not a strong ETag", v1)
	}
	if got := e.do("GET", wsPath, owner, nil).Header.Get("ETag"); got != v1 {
		t.Errorf("GET ETag %s != create ETag %s", got, v1)
	}
	r := e.do("PUT", wsPath, owner, map[string]any{"name": "v2"}, "If-Match", v1)
	expect(t, r, 200)
	v2 := r.Header.Get("ETag")
	if v2 == v1 {
		t.Error("ETag did not change")
	}
	// Stale: 412, record unchanged.
	r = e.do("PUT", wsPath, owner, map[string]any{"name": "v3"}, "If-Match", v1)
	expect(t, r, 412)
	if r.Code() != "precondition_failed" {
		t.Errorf("code %s", r.Code())
	}
	expect(t, e.do("DELETE", wsPath, owner, nil, "If-Match", v1), 412)
	if got := e.do("GET", wsPath, owner, nil); got.Data()["name"] != "v2" || got.Header.Get("ETag") != v2 {
		t.Errorf("record changed by a refused request: %s", got.Body)
	}
	expect(t, e.do("PUT", wsPath, owner, map[string]any{"name": "v3"}, "If-Match", `"other", `+v2), 200)
	expect(t, e.do("PUT", wsPath, owner, map[string]any{"name": "v4"}, "If-Match", "*"), 200)
	expect(t, e.do("PUT", wsPath, owner, map[string]any{"name": "v5"}), 200)
	// Two If-Match lines are one list: the second naming the ETag holds.
	v5 := e.do("GET", wsPath, owner, nil).Header.Get("ETag")
	req, _ := http.NewRequest("PUT", e.URL+wsPath, strings.NewReader(`{"name":"v6"}`))
	req.Header.Set("Authorization", "Bearer "+owner)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add("If-Match", `"other"`)
	req.Header.Add("If-Match", v5)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("two If-Match lines, the second current: %v %v", res, err)
	} else {
		res.Body.Close()
	}

	// Workspace users.
	add := e.do("POST", wsPath+"/users", owner, map[string]any{"id": member.ID, "role": "member"})
	expect(t, add, 201)
	mPath := wsPath + "/users/" + member.ID
	m1 := add.Header.Get("ETag")
	if got := e.do("GET", mPath, owner, nil).Header.Get("ETag"); got != m1 {
		t.Errorf("member GET ETag %s != %s", got, m1)
	}
	r = e.do("PUT", mPath, owner, map[string]any{"role": "developer"}, "If-Match", m1)
	expect(t, r, 200)
	expect(t, e.do("PUT", mPath, owner, map[string]any{"role": "admin"}, "If-Match", m1), 412)
	expect(t, e.do("DELETE", mPath, owner, nil, "If-Match", m1), 412)
	if got := e.do("GET", mPath, owner, nil); got.Data()["role"] != "developer" {
		t.Errorf("member changed by a refused request: %s", got.Body)
	}
	expect(t, e.do("DELETE", mPath, owner, nil, "If-Match", r.Header.Get("ETag")), 204)

	// API keys: the ETag of the record as created; a used key has a new last_used_at only
	// after a flush, so a delete with the create ETag matches until then.
	k := e.do("POST", "/api/v1/api-keys", owner, map[string]any{"name": "etag"})
	kPath := fmt.Sprint("/api/v1/api-keys/", k.Data()["id"])
	expect(t, e.do("DELETE", kPath, owner, nil, "If-Match", `"stale"`), 412)
	expect(t, e.do("GET", "/api/v1/user", k.JSON()["token"].(string), nil), 200)
	expect(t, e.do("DELETE", kPath, owner, nil, "If-Match", "*"), 204)
	k = e.do("POST", "/api/v1/api-keys", owner, map[string]any{"name": "etag2"})
	expect(t, e.do("DELETE", fmt.Sprint("/api/v1/api-keys/", k.Data()["id"]), owner, nil, "If-Match", k.Header.Get("ETag")), 204)

	// Workspace delete with the current ETag.
	cur := e.do("GET", wsPath, owner, nil).Header.Get("ETag")
	expect(t, e.do("DELETE", wsPath, owner, nil, "If-Match", cur), 204)
}

// TestIdempotencyKeyBoundCountsCharacters: the bound is 255 characters, as documented and
// as the OpenAPI document's maxLength counts (FuzzIdempotencyKey: 200 "é", 400 bytes,
// were refused); a byte that is not UTF-8 counts as one.
func TestIdempotencyKeyBoundCountsCharacters(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		key    string
		status int
	}{
		{strings.Repeat("é", 255), 201},
		{strings.Repeat("é", 256), 422},
		{strings.Repeat("x", 255), 201},
		{strings.Repeat("x", 256), 422},
		{strings.Repeat("\xff", 255), 201},
		{strings.Repeat("\xff", 256), 422},
		{strings.Repeat("😀", 255), 201},
	}
	for i, c := range cases {
		r := e.do("POST", "/api/v1/knowledge-bases", e.Owner.Token, map[string]any{"name": fmt.Sprint("kb ", i)}, "Idempotency-Key", c.key)
		if expect(t, r, c.status); c.status == 422 {
			expectFields(t, r, "Idempotency-Key")
		}
	}
}
