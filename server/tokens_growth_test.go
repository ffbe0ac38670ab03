package server_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/validate"
)

// Through the API: the key that reaches validate.MaxLiveAPIKeys is 201, the one past it
// 409 conflict naming the bound, and the list still holds the bound.
func TestAPIKeyBoundOverHTTP(t *testing.T) {
	s := testkit.NewServer(t, nil)
	for i := 1; i < validate.MaxLiveAPIKeys; i++ { // the account's first key is one
		testkit.Expect(t, s.Do("POST", "/api/v1/api-keys", s.Owner.Token, map[string]any{"name": "k" + strconv.Itoa(i)}), http.StatusCreated)
	}
	r := s.Do("POST", "/api/v1/api-keys", s.Owner.Token, map[string]any{"name": "past"})
	testkit.Expect(t, r, http.StatusConflict)
	if r.Code() != "conflict" || !strings.Contains(r.JSON()["message"].(string), strconv.Itoa(validate.MaxLiveAPIKeys)) {
		t.Errorf("past the bound: %s", r.Body)
	}
	list := s.Do("GET", "/api/v1/api-keys?per_page=100", s.Owner.Token, nil)
	testkit.Expect(t, list, http.StatusOK)
	if n := len(list.List()); n != validate.MaxLiveAPIKeys || list.Meta()["next_cursor"] != nil {
		t.Errorf("%d keys listed (next %v), want %d", n, list.Meta()["next_cursor"], validate.MaxLiveAPIKeys)
	}
}

// Through the API: a login token deleted by the token pass is 401 unauthenticated; a key
// without expiry keeps working.
func TestPrunedLoginTokenOverHTTP(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	s := testkit.NewServer(t, func(o *bolt.Options) { o.Now, o.LoginTTL = clock, time.Hour })
	login := s.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": s.Owner.Email, "password": s.Owner.Password})
	testkit.Expect(t, login, http.StatusOK)
	token := login.JSON()["token"].(string)
	testkit.Expect(t, s.Do("GET", "/api/v1/user", token, nil), http.StatusOK)
	now.Add(int64(time.Hour))
	if n, err := s.Svc.Auth.PruneTokens(context.Background()); err != nil || n != 1 {
		t.Fatalf("the pass deleted %d tokens, %v; want the login", n, err)
	}
	r := s.Do("GET", "/api/v1/user", token, nil)
	testkit.Expect(t, r, http.StatusUnauthorized)
	if r.Code() != "unauthenticated" {
		t.Errorf("a deleted token: %s", r.Body)
	}
	testkit.Expect(t, s.Do("GET", "/api/v1/user", s.Owner.Token, nil), http.StatusOK)
}
