package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/webhook"
)

// crashedRequest makes the change a request under an Idempotency-Key makes, through the
// service and with the claim the server would pass, and then stops as a crash would:
// before the server keeps the response.
func crashedRequest(t *testing.T, s *testkit.Server, token, method, path, body string, do func(ctx context.Context) error) {
	t.Helper()
	crashedRequestAnswering(t, s, http.StatusCreated, token, method, path, body, do)
}

// crashedRequestAnswering is crashedRequest for a route answering status on success.
func crashedRequestAnswering(t *testing.T, s *testkit.Server, status int, token, method, path, body string, do func(ctx context.Context) error) {
	t.Helper()
	id := tokenIDOf(t, token)
	p, err := s.Svc.Auth.Authenticate(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(method + " " + path + "\n" + body))
	ctx := data.WithIdempotencyClaim(data.WithPrincipal(context.Background(), p),
		&data.IdempotencyClaim{TokenID: id, Key: "k-" + path, RequestHash: hex.EncodeToString(sum[:]), Status: status})
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
			id := tokenIDOf(t, s.Owner.Token)
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

// The actions that are not creates keep their answer with their claim too: a retry after
// a crash that lost the answer gets it back (status, body, an ETag only where the action
// answers a record), and the action is not carried out twice (issue 24).
func TestIdempotencyClaimKeepsEveryActionsAnswer(t *testing.T) {
	s := testkit.NewServer(t, nil)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer receiver.Close()
	kb := s.Do("POST", "/api/v1/knowledge-bases", s.Owner.Token, `{"name":"Docs"}`)
	testkit.Expect(t, kb, 201)
	kbID := kb.Data()["id"].(string)
	hook := s.Do("POST", "/api/v1/webhooks", s.Owner.Token, `{"url":"`+receiver.URL+`","events":["webhook.test"]}`)
	testkit.Expect(t, hook, 201)
	hookID := hook.Data()["id"].(string)
	d := webhook.NewDispatcher(s.Svc.Deliveries, webhook.Config{AllowPrivate: true, Workers: 2})
	s.Store.SetEventHook(d.Wake)
	d.Start(context.Background())
	defer func() { s.Store.SetEventHook(nil); d.Stop(context.Background()) }()
	testkit.Expect(t, s.Do("POST", "/api/v1/webhooks/"+hookID+"/test", s.Owner.Token, nil), 202)
	deliveries := func() []any {
		return s.Do("GET", "/api/v1/webhooks/"+hookID+"/deliveries?per_page=100", s.Owner.Token, nil).List()
	}
	var first map[string]any
	for deadline := time.Now().Add(30 * time.Second); first == nil || first["status"] != data.DeliverySucceeded; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the test event's delivery: %v", first)
		}
		if list := deliveries(); len(list) == 1 {
			first = list[0].(map[string]any)
		}
	}
	firstID := first["id"].(string)
	replay := data.WebhookReplay{From: data.NewTime(time.Now().Add(-time.Hour)), To: data.NewTime(time.Now().Add(time.Hour))}
	replayBody, _ := json.Marshal(replay)
	for _, c := range []struct {
		name, path, body string
		status           int
		etag             bool
		do               func(ctx context.Context) error
	}{
		{"adding sources", "/api/v1/knowledge-bases/" + kbID + "/sources/add", `{"texts":[{"title":"a","content":"hello"}]}`, 200, true, func(ctx context.Context) error {
			_, err := s.Svc.KnowledgeBases.AddSources(ctx, kbID, data.SourcesAdd{Texts: []data.TextInput{{Title: "a", Content: "hello"}}})
			return err
		}},
		{"a webhook's test", "/api/v1/webhooks/" + hookID + "/test", "", 202, false, func(ctx context.Context) error {
			_, err := s.Svc.Webhooks.SendTestEvent(ctx, hookID)
			return err
		}},
		{"a replay", "/api/v1/webhooks/" + hookID + "/replay", string(replayBody), 202, false, func(ctx context.Context) error {
			_, err := s.Svc.Webhooks.ReplayEvents(ctx, hookID, replay)
			return err
		}},
		{"a delivery's retry", "/api/v1/webhooks/" + hookID + "/deliveries/" + firstID + "/retry", "", 202, false, func(ctx context.Context) error {
			_, err := s.Svc.Webhooks.RetryDelivery(ctx, hookID, firstID)
			return err
		}},
	} {
		crashedRequestAnswering(t, s, c.status, s.Owner.Token, "POST", c.path, c.body, c.do)
		r := s.Do("POST", c.path, s.Owner.Token, c.body, "Idempotency-Key", "k-"+c.path)
		testkit.Expect(t, r, c.status)
		if r.Header.Get("Idempotent-Replayed") != "true" || r.Data() == nil || (r.Header.Get("ETag") != "") != c.etag {
			t.Errorf("%s: retry after the crash: %s %v", c.name, r.Body, r.Header)
		}
	}
	if n := len(s.Do("GET", "/api/v1/knowledge-bases/"+kbID, s.Owner.Token, nil).Data()["texts"].([]any)); n != 1 {
		t.Errorf("%d texts, want the one added once", n)
	}
	// The setup's test event and delivery, the crashed test's, the replay of both tests,
	// the retry: each once. A test event reaches its delivery through the dispatcher's
	// fan-out, after the request has answered, so wait for the five (a sixth would be a
	// request carried out twice; the fan-out makes no more once the five are there).
	n := len(deliveries())
	for deadline := time.Now().Add(30 * time.Second); n < 5 && time.Now().Before(deadline); n = len(deliveries()) {
		time.Sleep(10 * time.Millisecond)
	}
	if n != 5 {
		t.Errorf("%d deliveries, want 5", n)
	}
}

// A claim kept without its answer (the route's success status unknown to it) still stops
// a second change: the retry is told the request was carried out.
func TestIdempotencyClaimWithoutAnswerRefusesTheRetry(t *testing.T) {
	s := testkit.NewServer(t, nil)
	kb := s.Do("POST", "/api/v1/knowledge-bases", s.Owner.Token, `{"name":"Docs"}`)
	testkit.Expect(t, kb, 201)
	kbID := kb.Data()["id"].(string)
	path, body := "/api/v1/knowledge-bases/"+kbID+"/sources/add", `{"texts":[{"title":"a","content":"hello"}]}`
	crashedRequestAnswering(t, s, 0, s.Owner.Token, "POST", path, body, func(ctx context.Context) error {
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
