package server_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/webhook"
)

// The event examples: a webhook's delivery body, checked on a real delivery to a
// receiver, and an event of the audit log.

// docWebhook makes a webhook of every event type the examples need, posting to a
// receiver, with a dispatcher running on the env's database.
func (e *docEnv) docWebhook(t *testing.T) (id string, rc *receiver) {
	t.Helper()
	rc = newReceiver(t, nil)
	r := e.Do("POST", "/api/v1/webhooks", e.tok, map[string]any{"url": rc.srv.URL,
		"events": []any{"workspace.updated"}, "description": "docs examples"})
	testkit.Expect(t, r, 201)
	rc.setSecret(r.JSON()["secret"].(string))
	d := webhook.NewDispatcher(cli.NewServices(e.Store).Deliveries, webhook.Config{AllowPrivate: true,
		Schedule: []time.Duration{10 * time.Millisecond}, Workers: 1, Timeout: 30 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(e.Logs, nil))})
	e.Store.SetEventHook(d.Wake)
	d.Start(context.Background())
	t.Cleanup(func() {
		e.Store.SetEventHook(nil)
		d.Stop(context.Background())
	})
	return r.Data()["id"].(string), rc
}

// delivered waits for the receiver to accept a delivery of the event type.
func delivered(t *testing.T, rc *receiver, typ string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a timing assertion
	for time.Now().Before(deadline) {
		got, _, bad := rc.snapshot()
		if len(bad) > 0 {
			t.Fatalf("bad deliveries: %v", bad)
		}
		for _, g := range got {
			if g.Type == typ {
				return g.Body
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s delivery", typ)
	return nil
}

// webhookEnvelope checks webhooks.md's envelope against the delivery of a workspace update.
func webhookEnvelope(e *docEnv, t *testing.T, reqs []docRequest) {
	_, rc := e.docWebhook(t)
	testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+e.ids["ws"], e.tok, map[string]any{"description": ""}), 200)
	got := delivered(t, rc, "workspace.updated")
	if f := shapeFindings("$", reqs[0].body, got, true); len(f) > 0 {
		t.Errorf("the doc's envelope departs from the delivery: %v\ndelivery: %v", f, got)
	}
}

// webhookTestEvent checks webhooks.md's test event against the delivery of a test.
func webhookTestEvent(e *docEnv, t *testing.T, reqs []docRequest) {
	id, rc := e.docWebhook(t)
	testkit.Expect(t, e.Do("POST", "/api/v1/webhooks/"+id+"/test", e.tok, nil), 202)
	got := delivered(t, rc, "webhook.test")
	if f := shapeFindings("$", reqs[0].body, got, true); len(f) > 0 {
		t.Errorf("the doc's test event departs from the delivery: %v\ndelivery: %v", f, got)
	}
}

// auditEvent checks webhooks.md's audit-log event against the log's newest
// workspace.updated.
func auditEvent(e *docEnv, t *testing.T, reqs []docRequest) {
	testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+e.ids["ws"], e.tok, map[string]any{"description": ""}), 200)
	r := e.Do("GET", "/api/v1/audit-log?type=workspace.updated&per_page=1", e.tok, nil)
	testkit.Expect(t, r, 200)
	expectMember(t, reqs[0].body, r, true, "data", 0)
}

// retentionEvent checks calls.md's retention.swept event against a sweep of a workspace
// keeping calls one day, two days after its call: the env's clock moves on two days (the
// campaign checks after this one are still inside their Monday-to-Friday window).
func retentionEvent(e *docEnv, t *testing.T, reqs []docRequest) {
	r := e.Do("POST", "/api/v1/workspaces", e.tok, map[string]any{"name": "Archive"})
	testkit.Expect(t, r, 201)
	ws := r.Data()["id"].(string)
	tok := e.Server.TokenIn(e.Owner, ws)
	r = e.Do("POST", "/api/v1/agents", tok, map[string]any{"name": "Archivist"})
	testkit.Expect(t, r, 201)
	testkit.Expect(t, e.Do("POST", "/api/v1/calls", tok, map[string]any{"agent_id": r.Data()["id"], "direction": "inbound",
		"from_number": "+15551230000", "to_number": docNumber, "status": "ended"}), 201)
	testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+ws, tok, map[string]any{"privacy": map[string]any{"retention_days": 1}}), 200)
	e.skew.Add(int64(48 * time.Hour))
	if _, err := e.Svc.Retention.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	r = e.Do("GET", "/api/v1/audit-log?type=retention.swept", tok, nil)
	testkit.Expect(t, r, 200)
	expectMember(t, reqs[0].body, r, false, "data", 0)                                 // the doc shows type and data
	expectMember(t, reqs[0].body.(map[string]any)["data"], r, true, "data", 0, "data") // the counts, all of them
}
