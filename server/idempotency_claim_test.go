package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// crashedRequest makes the change a request under an Idempotency-Key makes, through the
// service and with the claim the server would pass, and then stops as a crash would:
// before the server keeps the response.
func crashedRequest(t *testing.T, s *testkit.Server, token, method, path, body string, do func(ctx context.Context) error) {
	t.Helper()
	id, _ := strconv.ParseInt(strings.Split(token, "|")[0], 10, 64)
	p, err := s.Svc.Auth.Authenticate(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(method + " " + path + "\n" + body))
	ctx := data.WithIdempotencyClaim(data.WithPrincipal(context.Background(), p),
		&data.IdempotencyClaim{TokenID: id, Key: "k-" + path, RequestHash: hex.EncodeToString(sum[:]), Status: http.StatusCreated})
	if err := do(ctx); err != nil {
		t.Fatal(err)
	}
}

// A create's claim commits with the record: a retry after a crash that lost the response
// is answered with that record, never with a second one.
func TestIdempotencyClaimSurvivesALostResponse(t *testing.T) {
	s := testkit.NewServer(t, nil)
	ws := s.Owner.WorkspaceID
	grace := s.NewUser("grace@example.com", false)
	path := "/api/v1/workspaces/" + ws + "/users"
	body := `{"id":"` + grace.ID + `","role":"developer"}`
	crashedRequest(t, s, s.Owner.Token, "POST", path, body, func(ctx context.Context) error {
		_, err := s.Svc.WorkspaceUsers.AddWorkspaceUser(ctx, ws, data.WorkspaceUserAdd{ID: grace.ID, Role: "developer"})
		return err
	})
	r := s.Do("POST", path, s.Owner.Token, body, "Idempotency-Key", "k-"+path)
	testkit.Expect(t, r, 201)
	if r.Header.Get("Idempotent-Replayed") != "true" || r.Data()["id"] != grace.ID || r.Data()["role"] != "developer" {
		t.Fatalf("retry after the crash: %s %v", r.Body, r.Header)
	}
	show := s.Do("GET", path+"/"+grace.ID, s.Owner.Token, nil)
	if got, want := r.Header.Get("ETag"), show.Header.Get("ETag"); got != want {
		t.Errorf("replayed ETag %s, the record's %s", got, want)
	}
	if r.Data()["email"] != show.Data()["email"] {
		t.Errorf("replayed %s, stored %s", r.Body, show.Body)
	}
	if n := len(s.Do("GET", path, s.Owner.Token, nil).List()); n != 2 {
		t.Errorf("%d members after the retry, want the owner and grace", n)
	}
}

// Every create keeps its whole answer with its claim, what is shown only once (an API
// key's token, a webhook's secret) included: a retry after a crash that lost the answer
// gets the first answer back, and nothing is made twice.
func TestIdempotencyClaimKeepsEveryCreatesAnswer(t *testing.T) {
	s := testkit.NewServer(t, nil)
	enabled := true
	for _, c := range []struct {
		path, body, once string // once: the top-level member shown only once
		do               func(ctx context.Context) error
	}{
		{"/api/v1/api-keys", `{"name":"ci"}`, "token", func(ctx context.Context) error {
			_, _, err := s.Svc.Auth.CreateAPIKey(ctx, data.APIKeyCreate{Name: "ci"})
			return err
		}},
		{"/api/v1/webhooks", `{"url":"https://example.com/hook","events":["*"]}`, "secret", func(ctx context.Context) error {
			_, _, err := s.Svc.Webhooks.CreateWebhook(ctx, data.WebhookCreate{URL: "https://example.com/hook", Events: []string{"*"}, Enabled: &enabled})
			return err
		}},
		{"/api/v1/workspaces", `{"name":"Support"}`, "", func(ctx context.Context) error {
			_, err := s.Svc.Workspaces.CreateWorkspace(ctx, data.WorkspaceCreate{Name: "Support"})
			return err
		}},
		{"/api/v1/users", `{"name":"Ada","email":"ada@example.com","password":"correct horse"}`, "", func(ctx context.Context) error {
			_, err := s.Svc.Users.CreateUser(ctx, data.UserCreate{Name: "Ada", Email: "ada@example.com", Password: "correct horse"})
			return err
		}},
	} {
		var kept *data.IdempotentResponse
		crashedRequest(t, s, s.Owner.Token, "POST", c.path, c.body, func(ctx context.Context) error {
			if err := c.do(ctx); err != nil {
				return err
			}
			id, _ := strconv.ParseInt(strings.Split(s.Owner.Token, "|")[0], 10, 64)
			var err error
			kept, err = s.Svc.Idempotency.IdempotentResponse(context.Background(), id, "k-"+c.path)
			return err
		})
		r := s.Do("POST", c.path, s.Owner.Token, c.body, "Idempotency-Key", "k-"+c.path)
		testkit.Expect(t, r, 201)
		if r.Header.Get("Idempotent-Replayed") != "true" || r.Data()["id"] == nil {
			t.Errorf("%s: retry after the crash: %s %v", c.path, r.Body, r.Header)
			continue
		}
		if kept == nil || string(kept.Body) != string(r.Body) {
			t.Errorf("%s: replayed %s, the claim kept %v", c.path, r.Body, kept)
		}
		if c.once != "" && r.JSON()[c.once] == nil {
			t.Errorf("%s: the replay lacks %s: %s", c.path, c.once, r.Body)
		}
		if again := s.Do("POST", c.path, s.Owner.Token, c.body, "Idempotency-Key", "k-"+c.path); string(again.Body) != string(r.Body) {
			t.Errorf("%s: a second retry answered %s, the first %s", c.path, again.Body, r.Body)
		}
	}
	// The key made once works, and the token the replay showed is the key's.
	key := s.Do("POST", "/api/v1/api-keys", s.Owner.Token, `{"name":"ci"}`, "Idempotency-Key", "k-/api/v1/api-keys")
	testkit.Expect(t, s.Do("GET", "/api/v1/user", key.JSON()["token"].(string), nil), 200)
	if n := len(s.Do("GET", "/api/v1/workspaces", s.Owner.Token, nil).List()); n != 2 {
		t.Errorf("%d workspaces, want the personal one and Support", n)
	}
}

// An action whose answer the claim does not hold (adding sources answers the knowledge
// base as it is then) is still carried out once: the retry is told it was.
func TestIdempotencyClaimWithoutAnswerRefusesTheRetry(t *testing.T) {
	s := testkit.NewServer(t, nil)
	kb := s.Do("POST", "/api/v1/knowledge-bases", s.Owner.Token, `{"name":"Docs"}`)
	testkit.Expect(t, kb, 201)
	kbID := kb.Data()["id"].(string)
	path, body := "/api/v1/knowledge-bases/"+kbID+"/sources/add", `{"texts":[{"title":"a","content":"hello"}]}`
	crashedRequest(t, s, s.Owner.Token, "POST", path, body, func(ctx context.Context) error {
		_, err := s.Svc.KnowledgeBases.AddSources(ctx, kbID, data.SourcesAdd{Texts: []data.TextInput{{Title: "a", Content: "hello"}}})
		return err
	})
	r := s.Do("POST", path, s.Owner.Token, body, "Idempotency-Key", "k-"+path)
	testkit.Expect(t, r, 409)
	if !strings.Contains(r.JSON()["message"].(string), "carried out") {
		t.Errorf("message %s", r.Body)
	}
	if n := len(s.Do("GET", "/api/v1/knowledge-bases/"+kbID, s.Owner.Token, nil).Data()["texts"].([]any)); n != 1 {
		t.Errorf("%d texts, want the one added once", n)
	}
	// Another body under the same key is still the usual 422.
	testkit.ExpectFields(t, s.Do("POST", path, s.Owner.Token, `{"texts":[{"title":"b","content":"other"}]}`, "Idempotency-Key", "k-"+path), "Idempotency-Key")
}

// A request that fails keeps nothing: the same key may be used again once it is fixed.
func TestIdempotencyClaimNotKeptForAFailure(t *testing.T) {
	s := testkit.NewServer(t, nil)
	testkit.Expect(t, s.Do("POST", "/api/v1/workspaces", s.Owner.Token, `{"name":" "}`, "Idempotency-Key", "same"), 422)
	r := s.Do("POST", "/api/v1/workspaces", s.Owner.Token, `{"name":"fixed"}`, "Idempotency-Key", "same")
	testkit.Expect(t, r, 201)
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Error("a fixed request under the key of a failed one was replayed")
	}
}
