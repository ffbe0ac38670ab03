package server_test

import (
	"go.etcd.io/bbolt"

	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// auditTypes returns the workspace's audit log, oldest first, as "type" strings, and the
// events themselves.
func auditEvents(t *testing.T, s *testkit.Server, token string) []map[string]any {
	t.Helper()
	r := s.Do("GET", "/api/v1/audit-log?per_page=100", token, nil)
	testkit.Expect(t, r, 200)
	var out []map[string]any
	for i := len(r.List()) - 1; i >= 0; i-- {
		out = append(out, r.List()[i].(map[string]any))
	}
	return out
}

// Every security-relevant act is an event of the audit chain, with its actor and the
// client's address, and never a secret.
func TestSecurityEventsAreAudited(t *testing.T) {
	s := testkit.NewServer(t, nil)
	ws, owner := s.Owner.WorkspaceID, s.Owner.Token
	dev := s.NewUser("dev@example.com", false)

	testkit.Expect(t, s.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": s.Owner.Email, "password": "wrong-password"}), 422)
	login := s.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": s.Owner.Email, "password": s.Owner.Password})
	testkit.Expect(t, login, 200)
	key := s.Do("POST", "/api/v1/api-keys", owner, map[string]any{"name": "ci"})
	testkit.Expect(t, key, 201)
	keyID := fmt.Sprint(key.Data()["id"])
	testkit.Expect(t, s.Do("DELETE", "/api/v1/api-keys/"+keyID, owner, nil), 204)
	testkit.Expect(t, s.Do("POST", "/api/v1/workspaces/"+ws+"/users", owner, map[string]any{"id": dev.ID, "role": "developer"}), 201)
	testkit.Expect(t, s.Do("PUT", "/api/v1/workspaces/"+ws+"/users/"+dev.ID, owner, map[string]any{"role": "admin"}), 200)
	testkit.Expect(t, s.Do("DELETE", "/api/v1/workspaces/"+ws+"/users/"+dev.ID, owner, nil), 204)
	hook := s.Do("POST", "/api/v1/webhooks", owner, map[string]any{"url": "https://hooks.example.com/a", "events": []string{data.EventAPIKeyCreated, data.EventUserLogin}})
	testkit.Expect(t, hook, 201)
	hookID := hook.Data()["id"].(string)
	testkit.Expect(t, s.Do("PUT", "/api/v1/webhooks/"+hookID, owner, map[string]any{"description": "audited"}), 200)
	rotated := s.Do("POST", "/api/v1/webhooks/"+hookID+"/rotate-secret", owner, nil)
	testkit.Expect(t, rotated, 200)
	testkit.Expect(t, s.Do("DELETE", "/api/v1/webhooks/"+hookID, owner, nil), 204)
	testkit.Expect(t, s.Do("PUT", "/api/v1/user", owner, map[string]any{"password": "a-new-password", "current_password": s.Owner.Password}), 200)

	events := auditEvents(t, s, owner)
	var types []string
	for _, e := range events {
		types = append(types, e["type"].(string))
	}
	want := []string{
		data.EventUserLoginFailed, data.EventUserLogin, data.EventAPIKeyCreated, data.EventAPIKeyRevoked,
		data.EventWorkspaceUserAdded, data.EventWorkspaceUserUpdated, data.EventWorkspaceUserRemoved,
		data.EventWebhookCreated, data.EventWebhookUpdated, data.EventWebhookSecretRotated, data.EventWebhookDeleted,
		data.EventUserPasswordChanged,
	}
	// The owner's test key, made before, is the first event.
	if got := strings.Join(types[1:], " "); got != strings.Join(want, " ") {
		t.Fatalf("audit log:\n got %s\nwant %s", got, strings.Join(want, " "))
	}
	raw := string(s.Do("GET", "/api/v1/audit-log?per_page=100", owner, nil).Body)
	for _, secret := range []string{hook.JSON()["secret"].(string), rotated.JSON()["secret"].(string), key.JSON()["token"].(string), login.JSON()["token"].(string), "a-new-password", "wrong-password"} {
		if strings.Contains(raw, secret) || strings.Contains(raw, strings.SplitN(secret, "|", 2)[len(strings.SplitN(secret, "|", 2))-1]) {
			t.Errorf("the audit log holds a secret %q", secret)
		}
	}
	for _, e := range events[1:] {
		actor := e["actor"].(map[string]any)
		if actor["address"] != "127.0.0.1" {
			t.Errorf("%s: actor %v lacks the client address", e["type"], actor)
		}
		switch e["type"] {
		case data.EventUserLoginFailed:
			if actor["type"] != "client" {
				t.Errorf("a failed login's actor %v", actor)
			}
		default:
			if actor["type"] != "user" || actor["user_id"] != s.Owner.ID || actor["token_id"] == nil {
				t.Errorf("%s: actor %v, want the owner and a token", e["type"], actor)
			}
		}
	}
	// The chain still verifies with every new event in it.
	if problems, n, err := s.Svc.Audit.VerifyAuditChain(testkit.As(&data.User{ID: s.Owner.ID, PersonalWorkspaceID: ws}), ws); err != nil || len(problems) > 0 || n != len(events) {
		t.Errorf("verify: %d problems %v in %d events (%v)", len(problems), problems, n, err)
	}
}

// The head names the newest link; it moves with every event.
func TestAuditHead(t *testing.T) {
	s := testkit.NewServer(t, nil)
	head := func() map[string]any {
		r := s.Do("GET", "/api/v1/audit-log/head", s.Owner.Token, nil)
		testkit.Expect(t, r, 200)
		return r.Data()
	}
	before := head()
	newest := s.Do("GET", "/api/v1/audit-log?per_page=1", s.Owner.Token, nil).List()[0].(map[string]any)
	if before["hash"] != newest["hash"] || before["event_id"] != newest["id"] || before["workspace_id"] != s.Owner.WorkspaceID {
		t.Fatalf("head %v, newest event %v", before, newest)
	}
	testkit.Expect(t, s.Do("PUT", "/api/v1/workspaces/"+s.Owner.WorkspaceID, s.Owner.Token, map[string]any{"name": "moved"}), 200)
	if after := head(); after["hash"] == before["hash"] || !strings.HasPrefix(after["hash"].(string), "k1:") {
		t.Errorf("head after an event: %v (before %v)", after, before)
	}
	member := s.Member("m@example.com", s.Owner.WorkspaceID, data.RoleMember, nil, nil)
	testkit.Expect(t, s.Do("GET", "/api/v1/audit-log/head", member.Token, nil), 403)
}

// GET /audit-log/verify recomputes the chain online: intact, then the edited event named.
func TestAuditVerifyOnline(t *testing.T) {
	s := testkit.NewServer(t, nil)
	testkit.Expect(t, s.Do("PUT", "/api/v1/workspaces/"+s.Owner.WorkspaceID, s.Owner.Token, map[string]any{"name": "one"}), 200)
	r := s.Do("GET", "/api/v1/audit-log/verify", s.Owner.Token, nil)
	testkit.Expect(t, r, 200)
	if r.Data()["intact"] != true || r.Data()["checked"] != 2.0 {
		t.Fatalf("an untouched chain: %s", r.Body)
	}
	edited := s.Do("GET", "/api/v1/audit-log?per_page=1", s.Owner.Token, nil).List()[0].(map[string]any)["id"].(string)
	testkit.NeedBolt(t)
	err := s.DB.Bolt().Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("events"))
		stored, err := bolt.StoredEventJSON(edited, b.Get([]byte(edited)))
		if err != nil {
			return err
		}
		raw := strings.Replace(string(stored), `"one"`, `"forged"`, 1)
		return b.Put([]byte(edited), []byte(raw))
	})
	if err != nil {
		t.Fatal(err)
	}
	r = s.Do("GET", "/api/v1/audit-log/verify", s.Owner.Token, nil)
	testkit.Expect(t, r, 200)
	if r.Data()["intact"] != false || !strings.Contains(string(r.Body), edited) {
		t.Fatalf("an edited chain: %s", r.Body)
	}
	member := s.Member("m@example.com", s.Owner.WorkspaceID, data.RoleDeveloper, nil, nil)
	testkit.Expect(t, s.Do("GET", "/api/v1/audit-log/verify", member.Token, nil), 403)
}
