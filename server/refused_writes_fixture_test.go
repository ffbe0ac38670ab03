package server_test

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// refusalWorkspace is the workspace the refused writes aim at: the property test's records
// (an agent with two versions and a rollout, a test and its run, a conversation, an
// analysed call, a backfill job, a number, a campaign with recipients) and beside them a
// knowledge base with a text source, a webhook, a suppression, a developer member and an
// API key; a second workspace of the same owner, whose token finds none of them; and a
// third workspace the owner is no member of.
type refusalWorkspace struct {
	*streamEnv
	ws string
	// ids names a valid value for each path parameter of the write routes.
	ids map[string]string
	// values are the records' ids and numbers the valid bodies refer to.
	values map[string]string
	// foreign are records of the second workspace, by the body member naming one.
	foreign map[string]string
	// elsewhere is the owner's token bound to the second workspace; stranger a workspace
	// the owner is no member of, and strangerKey an API key id of its user.
	elsewhere, stranger, strangerKey string
	// logout is a token of the owner's kept for the logout route, which acts on the
	// token calling it.
	logout string
}

// newRefusalWorkspace builds the workspace, and runs every job it queues to its end.
func newRefusalWorkspace(t *testing.T) *refusalWorkspace {
	e, stand := newRecordsEnv(t)
	w := &refusalWorkspace{streamEnv: e, ws: e.Owner.WorkspaceID, values: map[string]string{}}
	tok := e.Owner.Token
	agent := e.newAgent("A")
	rec := e.makeAgentRecords(t, stand, []string{agent}, map[string]string{})
	w.ids = map[string]string{"workspace_id": w.ws, "agent_id": agent, "version_number": "1",
		"test_id": anyKey(rec.tests), "call_id": anyKey(rec.callAgent), "conversation_id": anyKey(rec.convs),
		"campaign_id": anyKey(rec.campaigns), "run_id": anyKey(rec.runs), "job_id": anyKey(rec.jobs), "other": "current"}
	res := e.do("GET", "/api/v1/numbers", tok, nil)
	expect(t, res, 200)
	w.ids["number_id"] = itemIDs(res.List())[0]
	w.values["phone_number"] = res.List()[0].(map[string]any)["phone_number"].(string)

	w.ids["knowledge_base_id"] = w.create(t, "/api/v1/knowledge-bases", map[string]any{"name": "Policies"})
	res = e.do("POST", "/api/v1/knowledge-bases/"+w.ids["knowledge_base_id"]+"/sources/add", tok,
		map[string]any{"texts": []any{map[string]any{"title": "Returns", "content": "Parcels may be returned within 30 days."}}})
	expect(t, res, 200)
	w.ids["source_type"], w.ids["source_id"] = "texts", sourceOf(t, res)
	w.ids["webhook_id"] = w.create(t, "/api/v1/webhooks", map[string]any{"url": "https://hooks.example.com/refused", "events": []string{"*"}})
	w.ids["suppression_id"] = w.create(t, "/api/v1/suppressions", map[string]any{"phone_number": "+14155550999", "reason": "asked"})
	res = e.do("POST", "/api/v1/api-keys", tok, map[string]any{"name": "kept"})
	expect(t, res, 201)
	w.ids["key_id"] = strconv.Itoa(int(res.Data()["id"].(float64)))
	w.logout = res.JSON()["token"].(string)

	owner := testkit.AsRole(&data.User{ID: e.Owner.ID}, w.ws, data.RoleOwner)
	member := e.User(t, "developer@example.com")
	if _, err := e.Svc.WorkspaceUsers.AddWorkspaceUser(owner, w.ws, data.WorkspaceUserAdd{ID: member.ID, Role: data.RoleDeveloper}); err != nil {
		t.Fatal(err)
	}
	w.ids["user_id"] = member.ID
	w.values["outsider"] = e.User(t, "outsider@example.com").ID

	second := w.create(t, "/api/v1/workspaces", map[string]any{"name": "Second"})
	w.elsewhere = e.Token(t, &data.User{ID: e.Owner.ID}, second)
	stranger := e.User(t, "stranger@example.com")
	w.stranger = stranger.PersonalWorkspaceID
	w.strangerKey, _, _ = strings.Cut(e.Token(t, stranger, ""), "|")
	w.makeForeignRecords(t)
	w.ids["delivery_id"] = w.finishedDelivery(t)
	return w
}

// finishedDelivery is a delivery of the webhook the dispatcher has posted, as its
// receiver took it: one a retry may be asked of (a pending one is 409). The test plays
// the dispatcher's part through its queue, so nothing is posted anywhere.
func (w *refusalWorkspace) finishedDelivery(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	for {
		n, err := w.Svc.Deliveries.FanOut(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	jobs, _, err := w.Svc.Deliveries.ClaimDueDeliveries(ctx, time.Now(), 1, time.Minute, func(string) bool { return false })
	if err != nil || len(jobs) == 0 {
		t.Fatalf("no delivery of the webhook to claim: %v", err)
	}
	if err := w.Svc.Deliveries.FinishAttempt(ctx, jobs[0].DeliveryID, data.AttemptOutcome{Succeeded: true, ResponseStatus: 200}); err != nil {
		t.Fatal(err)
	}
	return jobs[0].DeliveryID
}

// makeForeignRecords makes, in the second workspace, a record of each kind a body names
// by id: an agent with a test, a number, a knowledge base.
func (w *refusalWorkspace) makeForeignRecords(t *testing.T) {
	t.Helper()
	make := func(path string, body map[string]any) string {
		res := w.do("POST", path, w.elsewhere, body)
		expect(t, res, 201)
		return res.Data()["id"].(string)
	}
	agent := make("/api/v1/agents", map[string]any{"name": "Elsewhere"})
	w.foreign = map[string]string{"agent_id": agent, "workspace_id": w.stranger,
		"number_id":         make("/api/v1/numbers", map[string]any{"phone_number": "+14155550166", "provider": "twilio"}),
		"knowledge_base_id": make("/api/v1/knowledge-bases", map[string]any{"name": "Elsewhere"}),
		"test_id": make("/api/v1/agents/"+agent+"/tests", map[string]any{"name": "Elsewhere", "user": map[string]any{"script": []string{"Hi"}},
			"criteria": []any{map[string]any{"type": "says", "pattern": "Hi"}}})}
}

// foreignValues are, for a body member naming a record by id (agent_id, inbound_agent_id,
// knowledge_base_ids, ...), a record of the second workspace: never one the route may
// take.
func (w *refusalWorkspace) foreignValues(name string, _ map[string]any) []badValue {
	for suffix, id := range w.foreign {
		switch {
		case strings.HasSuffix(name, suffix):
			return []badValue{{"body id of another workspace", id}}
		case strings.HasSuffix(name, suffix+"s"):
			return []badValue{{"body id of another workspace", []any{id}}}
		}
	}
	return nil
}

// create posts body to path as the owner and returns the new record's id.
func (w *refusalWorkspace) create(t *testing.T, path string, body map[string]any) string {
	t.Helper()
	res := w.do("POST", path, w.Owner.Token, body)
	expect(t, res, 201)
	return res.Data()["id"].(string)
}

// sourceOf is the id of the one source an add of sources made.
func sourceOf(t *testing.T, res *response) string {
	t.Helper()
	for _, s := range asList(res.Data()["texts"]) {
		if id, ok := s.(map[string]any)["id"].(string); ok {
			return id
		}
	}
	t.Fatalf("the add made no source: %s", res.Body)
	return ""
}

func anyKey[V any](m map[string]V) string {
	for k := range maps.Keys(m) {
		return k
	}
	return ""
}

// validBody is a body the route would take as it stands on the workspace's records: the
// document's example, with the fixes a route needs where the example's placeholders name
// nothing (an agent id, a phone number) or a record the workspace already holds.
func (w *refusalWorkspace) validBody(op documentedOp, example map[string]any) map[string]any {
	body := maps.Clone(example)
	if body == nil {
		body = map[string]any{}
	}
	switch op.method + " " + op.path {
	case "POST /api/v1/calls":
		body["agent_id"], body["direction"] = w.ids["agent_id"], "web"
	case "POST /api/v1/calls/start":
		body["to_number"] = w.values["phone_number"]
	case "POST /api/v1/campaigns":
		body["agent_id"], body["number_id"] = w.ids["agent_id"], w.ids["number_id"]
		body["window"], body["recipients"] = everyDay, []any{map[string]any{"phone_number": "+14155550188"}}
		// retry's members are probed too (retry.on left out is refused, not read as []).
		body["retry"] = map[string]any{"on": []string{"busy"}, "max_attempts": 2, "backoff_minutes": 5}
	case "POST /api/v1/numbers":
		body["phone_number"] = "+14155550177"
	case "POST /api/v1/suppressions":
		body["phone_number"] = "+14155550178"
	case "POST /api/v1/auth/login":
		body["email"], body["password"] = "owner@example.com", "password-owner@example.com"
	case "POST /api/v1/users":
		body["password"] = "long enough password"
	case "POST /api/v1/workspaces/{workspace_id}/users":
		body["id"], body["role"] = w.values["outsider"], data.RoleDeveloper
	case "POST /api/v1/agents/{agent_id}/tests", "PUT /api/v1/agents/{agent_id}/tests/{test_id}":
		body["user"] = map[string]any{"script": []string{"Hello"}}
		body["criteria"] = []any{map[string]any{"type": "says", "pattern": "Welcome"}}
	case "POST /api/v1/agents/{agent_id}/analysis/backfill", "POST /api/v1/webhooks/{webhook_id}/replay":
		body["from"], body["to"] = "2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z"
	case "PUT /api/v1/agents/{agent_id}/rollout":
		body["variants"] = []any{map[string]any{"version": 1, "weight": 50}, map[string]any{"version": 2, "weight": 50}}
		// rollback's members are probed too (a threshold left out is refused, not read as 0).
		body["rollback"] = map[string]any{"metric": "failed_rate", "threshold": 0.2, "min_calls": 5}
	case "POST /api/v1/knowledge-bases/{knowledge_base_id}/sources/add":
		body["texts"] = []any{map[string]any{"title": "More", "content": "Opening hours are nine to five."}}
	case "POST /api/v1/suppressions/import":
		body["rows"] = []any{map[string]any{"phone_number": "+14155550179"}}
	}
	return body
}

// path fills the route's template with the workspace's ids, but param with value.
func (w *refusalWorkspace) path(template, param, value string) string {
	return pathParam.ReplaceAllStringFunc(template, func(p string) string {
		name := strings.Trim(p, "{}")
		if name == param {
			return value
		}
		return w.ids[name]
	})
}

// missing is an id of the valid one's shape that names nothing: the first character of
// its ULID's random part changed (an API key's and a version's number made large). Not
// the last character: ids made in one millisecond are the same ULID plus one, so the
// next delivery of an event fanned out to two webhooks was the "missing" one.
func missing(param, valid string) string {
	switch param {
	case "key_id", "version_number":
		return "987654"
	case "source_type":
		return "urls"
	}
	const ulidLen, timeLen = 26, 10
	at := len(valid) - ulidLen + timeLen
	if at < 0 {
		at = len(valid) - 1
	}
	changed := byte('Z')
	if valid[at] == 'Z' {
		changed = 'Y'
	}
	return valid[:at] + string(changed) + valid[at+1:]
}
