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

// A change whose record the claim cannot hold is still made once: the retry is told it
// was carried out.
func TestIdempotencyClaimWithoutRecordRefusesTheRetry(t *testing.T) {
	s := testkit.NewServer(t, nil)
	path, body := "/api/v1/workspaces", `{"name":"Support"}`
	crashedRequest(t, s, s.Owner.Token, "POST", path, body, func(ctx context.Context) error {
		_, err := s.Svc.Workspaces.CreateWorkspace(ctx, data.WorkspaceCreate{Name: "Support"})
		return err
	})
	r := s.Do("POST", path, s.Owner.Token, body, "Idempotency-Key", "k-"+path)
	testkit.Expect(t, r, 409)
	if !strings.Contains(r.JSON()["message"].(string), "carried out") {
		t.Errorf("message %s", r.Body)
	}
	if n := len(s.Do("GET", path, s.Owner.Token, nil).List()); n != 2 {
		t.Errorf("%d workspaces, want the personal one and Support", n)
	}
	// Another body under the same key is still the usual 422.
	testkit.ExpectFields(t, s.Do("POST", path, s.Owner.Token, `{"name":"Other"}`, "Idempotency-Key", "k-"+path), "Idempotency-Key")
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
