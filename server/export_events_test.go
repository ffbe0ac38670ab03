package server_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// lastEvent returns the newest event of typ in the caller's audit log, failing the test
// when there is none.
func lastEvent(t *testing.T, s *testkit.Server, token, typ string) map[string]any {
	t.Helper()
	events := auditEvents(t, s, token)
	for i := len(events) - 1; i >= 0; i-- {
		if events[i]["type"] == typ {
			return events[i]
		}
	}
	t.Fatalf("no %s event in the audit log", typ)
	return nil
}

// expectActor checks that e names the user a as its actor, with a token and the client
// address.
func expectActor(t *testing.T, e map[string]any, a *testkit.Account) {
	t.Helper()
	actor, _ := e["actor"].(map[string]any)
	if actor["type"] != "user" || actor["user_id"] != a.ID || actor["token_id"] == nil || actor["address"] != "127.0.0.1" {
		t.Errorf("%s: actor %v, want user %s with a token and an address", e["type"], actor, a.ID)
	}
}

// An export and an import each leave an event in the audit log of their workspace, with
// the caller as actor and counts or new ids as data, never an api_key or a webhook
// secret, even when the export carries the api_keys in the clear.
func TestWorkspaceExportAndImportAreAudited(t *testing.T) {
	const apiKey = "gsk_live_audit_secret_4321"
	s := testkit.NewServer(t, nil)
	owner := s.Owner.Token
	agent := s.Do("POST", "/api/v1/agents", owner, map[string]any{"name": "Support bot", "llm_config": map[string]any{"api_key": apiKey}})
	testkit.Expect(t, agent, 201)
	testkit.Expect(t, s.Do("POST", "/api/v1/agents/"+agent.Data()["id"].(string)+"/publish", owner, map[string]any{"description": "first"}), 204)
	testkit.Expect(t, s.Do("POST", "/api/v1/numbers", owner, map[string]any{"phone_number": "+14155550199", "provider": "sip"}), 201)
	testkit.Expect(t, s.Do("POST", "/api/v1/webhooks", owner, map[string]any{"url": "https://hooks.example.com/a", "events": []string{"*"}}), 201)

	exp := s.Do("GET", "/api/v1/workspaces/"+s.Owner.WorkspaceID+"/export?include_secrets=true", owner, nil)
	testkit.Expect(t, exp, 200)
	if !strings.Contains(string(exp.Body), apiKey) {
		t.Fatal("the export with include_secrets lacks the api_key: the test proves nothing")
	}
	e := lastEvent(t, s, owner, data.EventWorkspaceExported)
	expectActor(t, e, s.Owner)
	if e["workspace_id"] != s.Owner.WorkspaceID {
		t.Errorf("workspace.exported in %v", e["workspace_id"])
	}
	want := map[string]any{"include_secrets": true, "agents": 1.0, "agent_versions": 1.0, "agent_tests": 0.0, "knowledge_bases": 0.0,
		"texts": 0.0, "urls": 0.0, "files": 0.0, "numbers": 1.0, "webhooks": 1.0, "suppressions": 0.0}
	if got, _ := json.Marshal(e["data"]); string(got) != string(mustJSON(want)) {
		t.Errorf("workspace.exported data = %s, want %s", got, mustJSON(want))
	}

	// Into another user's workspace (the number must be free: delete it here first).
	other := s.NewUser("importer@example.com", false)
	nums := s.Do("GET", "/api/v1/numbers", owner, nil)
	testkit.Expect(t, s.Do("DELETE", "/api/v1/numbers/"+at(nums.List(), "0.id").(string), owner, nil), 204)
	imp := s.Do("POST", "/api/v1/workspaces/"+other.WorkspaceID+"/import", other.Token, json.RawMessage(exp.Body))
	testkit.Expect(t, imp, 201)
	secret := at(imp.JSON(), "webhook_secrets.0.secret").(string)
	e = lastEvent(t, s, other.Token, data.EventWorkspaceImported)
	expectActor(t, e, other)
	if e["workspace_id"] != other.WorkspaceID || at(e, "data.agents.0.id") != at(imp.Data(), "agents.0.id") ||
		at(e, "data.numbers.0.phone_number") != "+14155550199" || at(e, "data.webhooks.0.id") != at(imp.Data(), "webhooks.0.id") {
		t.Errorf("workspace.imported event = %v, want the import's result %s", e, imp.Body)
	}
	for _, a := range []*testkit.Account{s.Owner, other} {
		ctx := testkit.As(&data.User{ID: a.ID, PersonalWorkspaceID: a.WorkspaceID})
		if problems, _, err := s.Svc.Audit.VerifyAuditChain(ctx, a.WorkspaceID); err != nil || len(problems) > 0 {
			t.Errorf("the audit chain of %s: %v %v", a.Email, problems, err)
		}
	}
	for _, token := range []string{owner, other.Token} {
		raw := string(s.Do("GET", "/api/v1/audit-log?per_page=100", token, nil).Body)
		for _, secretText := range []string{apiKey, secret, strings.TrimPrefix(secret, "whsec_")} {
			if strings.Contains(raw, secretText) {
				t.Errorf("the audit log holds a secret %q", secretText)
			}
		}
	}
}

// A refused import records no workspace.imported event: neither one refused before its
// transaction (a fault of the document) nor one refused in it (a number already taken,
// refused in it), whose event rolls back with them. The quota refusal comes after the
// agent before it was written: the event's function ran in a transaction that never
// commits.
func TestRefusedImportIsNotAudited(t *testing.T) {
	s := testkit.NewServer(t, nil)
	testkit.Expect(t, s.Do("POST", "/api/v1/numbers", s.Owner.Token, map[string]any{"phone_number": "+14155550198", "provider": "sip"}), 201)
	doc := func(version int) map[string]any {
		return map[string]any{"format": data.ExportFormat, "version": version, "exported_at": "2026-01-01T00:00:00Z", "secrets": "masked",
			"workspace": map[string]any{"name": "x", "description": ""}, "agents": []any{}, "knowledge_bases": []any{},
			"numbers":  []any{map[string]any{"phone_number": "+14155550198", "nickname": "", "provider": "sip", "inbound_agent": nil, "outbound_agent": nil}},
			"webhooks": []any{}}
	}
	testkit.Expect(t, s.Do("POST", "/api/v1/workspaces/"+s.Owner.WorkspaceID+"/import", s.Owner.Token, doc(2)), 422)
	testkit.Expect(t, s.Do("POST", "/api/v1/workspaces/"+s.Owner.WorkspaceID+"/import", s.Owner.Token, doc(1)), 409)
	agent := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "A"})
	testkit.Expect(t, agent, 201)
	testkit.Expect(t, s.Do("POST", "/api/v1/webhooks", s.Owner.Token, map[string]any{"url": "https://hooks.example.com/q", "events": []any{"*"}}), 201)
	testkit.Expect(t, s.Do("DELETE", "/api/v1/numbers/"+at(s.Do("GET", "/api/v1/numbers", s.Owner.Token, nil).List(), "0.id").(string), s.Owner.Token, nil), 204)
	exp := s.Do("GET", "/api/v1/workspaces/"+s.Owner.WorkspaceID+"/export", s.Owner.Token, nil)
	testkit.Expect(t, exp, 200)
	testkit.Expect(t, s.Do("DELETE", "/api/v1/agents/"+agent.Data()["id"].(string), s.Owner.Token, nil), 204)
	if _, err := s.Svc.Subscriptions.SetSubscription(t.Context(), s.Owner.WorkspaceID, data.SubscriptionSet{Limits: map[string]int64{data.LimitWebhooks: 1}}); err != nil {
		t.Fatal(err)
	}
	r := s.Do("POST", "/api/v1/workspaces/"+s.Owner.WorkspaceID+"/import", s.Owner.Token, json.RawMessage(exp.Body))
	if r.Code() != data.EQUOTA {
		t.Fatalf("an import past the webhooks quota answered %d %s", r.Status, r.Body)
	}
	if list := s.Do("GET", "/api/v1/agents", s.Owner.Token, nil).List(); len(list) != 0 {
		t.Errorf("a refused import left agents: %v", list)
	}
	for _, e := range auditEvents(t, s, s.Owner.Token) {
		if e["type"] == data.EventWorkspaceImported {
			t.Errorf("a refused import was audited: %v", e)
		}
	}
}

// A backup download is audited in the admin's current workspace, naming the archive, and
// the event holds no part of the secret key it may carry.
func TestBackupDownloadIsAudited(t *testing.T) {
	testkit.NeedBolt(t)
	s := testkit.NewServer(t, nil)
	for _, exclude := range []bool{false, true} {
		q := ""
		if exclude {
			q = "?exclude_secret_key=true"
		}
		r := s.Do("GET", "/api/v1/admin/backup"+q, s.Owner.Token, nil)
		testkit.Expect(t, r, 200)
		e := lastEvent(t, s, s.Owner.Token, data.EventBackupDownloaded)
		expectActor(t, e, s.Owner)
		name := strings.TrimSuffix(strings.TrimPrefix(r.Header.Get("Content-Disposition"), `attachment; filename="`), `"`)
		if e["workspace_id"] != s.Owner.WorkspaceID || at(e, "data.archive") != name || name == "" ||
			at(e, "data.files_included") != true || at(e, "data.secret_key_included") != !exclude {
			t.Errorf("backup.downloaded (exclude_secret_key=%v) = %v, archive %q", exclude, e, name)
		}
	}
	raw := string(s.Do("GET", "/api/v1/audit-log?per_page=100", s.Owner.Token, nil).Body)
	for _, key := range []string{hex.EncodeToString(testkit.SecretKey), base64.StdEncoding.EncodeToString(testkit.SecretKey)} {
		if strings.Contains(raw, key) {
			t.Errorf("the audit log holds the secret key")
		}
	}
}
