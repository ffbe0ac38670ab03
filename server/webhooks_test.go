package server_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/netguard"
	"github.com/voiceapi/voiceapi/validate"
	"github.com/voiceapi/voiceapi/webhook"
)

// createWebhook makes a webhook through the API and returns its id and secret.
func createWebhook(t testing.TB, e *env, token, url string, events ...string) (string, string) {
	t.Helper()
	r := e.do("POST", "/api/v1/webhooks", token, map[string]any{"url": url, "events": events})
	expect(t, r, 201)
	secret, _ := r.JSON()["secret"].(string)
	return r.Data()["id"].(string), secret
}

// touchWorkspace records one workspace.updated event.
func touchWorkspace(t testing.TB, e *env, u *testUser, name string) {
	t.Helper()
	expect(t, e.do("PUT", "/api/v1/workspaces/"+u.WorkspaceID, u.Token, map[string]any{"name": name}), 200)
}

func TestWebhookCRUD(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	r := e.do("POST", "/api/v1/webhooks", tok, map[string]any{"url": "https://example.com/hook", "events": []string{"agent.created", "call.ended"}, "description": "CRM"})
	expect(t, r, 201)
	secret, _ := r.JSON()["secret"].(string)
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) < 24 || len(key) > 64 {
		t.Fatalf("secret %q is not whsec_ + base64 of 24 to 64 bytes", secret)
	}
	wh := r.Data()
	id := wh["id"].(string)
	if _, has := wh["secret"]; has || wh["enabled"] != true || wh["workspace_id"] != e.Owner.WorkspaceID || wh["description"] != "CRM" {
		t.Fatalf("record: %v", wh)
	}
	if strings.Contains(string(e.do("GET", "/api/v1/webhooks/"+id, tok, nil).Body), secret[6:]) {
		t.Fatal("show reveals the secret")
	}
	etag := r.Header.Get("ETag")

	// Bad input: every fault named at once, nothing stored or changed.
	expectFields(t, e.do("POST", "/api/v1/webhooks", tok, map[string]any{"url": "ftp://x", "events": []string{"*", "nope"}, "description": strings.Repeat("d", 1001)}),
		"url", "events.0", "events.1", "description")
	expectFields(t, e.do("POST", "/api/v1/webhooks", tok, map[string]any{"url": "https://u:p@x.com/", "events": []string{}}), "url", "events")
	expectFields(t, e.do("POST", "/api/v1/webhooks", tok, map[string]any{"events": []string{"call.ended", "call.ended"}, "secret": "x"}), "url", "events.1", "secret")
	expectFields(t, e.do("PUT", "/api/v1/webhooks/"+id, tok, map[string]any{"url": "https://example.com/" + strings.Repeat("a", 2048), "enabled": nil}), "url", "enabled")
	if l := e.do("GET", "/api/v1/webhooks", tok, nil).List(); len(l) != 1 {
		t.Fatalf("list after bad creates has %d webhooks", len(l))
	}
	if got := e.do("GET", "/api/v1/webhooks/"+id, tok, nil); got.Header.Get("ETag") != etag {
		t.Fatal("a refused update changed the webhook")
	}

	// Update with If-Match.
	expect(t, e.do("PUT", "/api/v1/webhooks/"+id, tok, map[string]any{"enabled": false}, "If-Match", `"stale"`), 412)
	r = e.do("PUT", "/api/v1/webhooks/"+id, tok, map[string]any{"enabled": false, "events": []string{"*"}}, "If-Match", etag)
	expect(t, r, 200)
	if d := r.Data(); d["enabled"] != false || fmt.Sprint(d["events"]) != "[*]" || d["url"] != "https://example.com/hook" {
		t.Fatalf("updated: %v", d)
	}

	// Rotation returns a new secret, once.
	r = e.do("POST", "/api/v1/webhooks/"+id+"/rotate-secret", tok, nil)
	expect(t, r, 200)
	if s2, _ := r.JSON()["secret"].(string); !strings.HasPrefix(s2, "whsec_") || s2 == secret {
		t.Fatalf("rotated secret %q", s2)
	}

	// Another workspace does not see it; a member (below developer) may not touch webhooks.
	other := e.newUser("other@example.com", false)
	expect(t, e.do("GET", "/api/v1/webhooks/"+id, other.Token, nil), 404)
	expect(t, e.do("DELETE", "/api/v1/webhooks/"+id, other.Token, nil), 404)
	expect(t, e.do("POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users", tok, map[string]any{"id": other.ID, "role": "member"}), 201)
	expect(t, e.do("GET", "/api/v1/webhooks", e.tokenIn(other, e.Owner.WorkspaceID), nil), 403)

	expect(t, e.do("DELETE", "/api/v1/webhooks/"+id, tok, nil), 204)
	expect(t, e.do("GET", "/api/v1/webhooks/"+id, tok, nil), 404)
	expect(t, e.do("GET", "/api/v1/webhooks/wh_nonsense", tok, nil), 404)
}

func TestWebhookURLRuleMatchesOutboundGuard(t *testing.T) {
	for _, u := range []string{"https://example.com/x", "http://h:8080/", "ftp://h/", "https://u:p@h/", "https:///x", "https://h:0/", "https://h:99999/", "https://h/a b", "mailto:x@y", "/relative"} {
		var errs validate.Errors
		validate.WebhookURL(&errs, "url", u)
		if (errs.Err() == nil) != (netguard.CheckURL(u) == nil) {
			t.Errorf("%q: validate says %v, netguard.CheckURL says %v", u, errs.Err(), netguard.CheckURL(u))
		}
	}
}

func TestDeliverySignedAndOnlyWhenSubscribed(t *testing.T) {
	e := newEnv(t)
	startDispatcher(t, e)
	updates := newReceiver(t, nil)
	members := newReceiver(t, nil)
	idU, secretU := createWebhook(t, e, e.Owner.Token, updates.srv.URL, data.EventWorkspaceUpdated)
	updates.setSecret(secretU)
	idM, secretM := createWebhook(t, e, e.Owner.Token, members.srv.URL, data.EventWorkspaceUserAdded)
	members.setSecret(secretM)

	for i := range 3 {
		touchWorkspace(t, e, e.Owner, fmt.Sprintf("renamed %d", i))
	}
	r := e.do("POST", "/api/v1/webhooks/"+idM+"/test", e.Owner.Token, nil)
	expect(t, r, 202)
	testEventID := r.Data()["id"].(string)

	waitFor(t, 30*time.Second, "3 updates and 1 test", func() bool {
		a, _, _ := updates.snapshot()
		b, _, _ := members.snapshot()
		return len(a) >= 3 && len(b) >= 1
	})
	// The outbox is fanned out oldest first, so every event before the test event (the
	// last, and delivered) has its deliveries already: once neither webhook has a
	// delivery pending, nothing more will be posted, and an event queued where it was not
	// subscribed is among them. (The dispatcher records an attempt's result after the
	// receiver has answered it.)
	var listU, listM []any
	waitFor(t, 30*time.Second, "every delivery's attempt recorded", func() bool {
		listU, listM = deliveryList(t, e, idU), deliveryList(t, e, idM)
		return nonePending(listU) && nonePending(listM)
	})
	gotU, postsU, badU := updates.snapshot()
	gotM, postsM, badM := members.snapshot()
	if len(badU)+len(badM) > 0 {
		t.Fatalf("signature or shape failures: %v %v", badU, badM)
	}
	for _, g := range gotU {
		if g.Type != data.EventWorkspaceUpdated || g.Body["workspace_id"] != e.Owner.WorkspaceID || g.Body["data"] == nil || g.Body["created_at"] == nil {
			t.Errorf("update webhook got %+v", g)
		}
	}
	if postsU != 3 || postsM != 1 || gotM[0].Type != data.EventWebhookTest || gotM[0].ID != testEventID {
		t.Fatalf("posts: updates %d, members %d (%+v): an event went where it was not subscribed", postsU, postsM, gotM)
	}
	if len(listU) != 3 || len(listM) != 1 {
		t.Fatalf("deliveries: updates %v, members %v: an event was queued where it was not subscribed", listU, listM)
	}
	for _, d := range append(listU, listM...) {
		if d := d.(map[string]any); d["status"] != data.DeliverySucceeded || d["response_status"] != 200.0 {
			t.Fatalf("delivery not recorded as succeeded with 200: %v", d)
		}
	}
}

// deliveryList returns the deliveries of webhook id, newest first.
func deliveryList(t testing.TB, e *env, id string) []any {
	t.Helper()
	r := e.do("GET", "/api/v1/webhooks/"+id+"/deliveries", e.Owner.Token, nil)
	expect(t, r, 200)
	return r.List()
}

// nonePending reports whether no delivery of list waits for its attempt or for the
// attempt's result to be recorded (an attempt that will be retried is recorded as
// retrying, its next attempt as a new pending delivery).
func nonePending(list []any) bool {
	for _, d := range list {
		if d.(map[string]any)["status"] == data.DeliveryPending {
			return false
		}
	}
	return true
}

func TestRetryUntilSuccessShowsEveryAttempt(t *testing.T) {
	e := newEnv(t)
	startDispatcher(t, e)
	rc := newReceiver(t, func(n int) int {
		if n <= 2 {
			return 500
		}
		return 200
	})
	id, secret := createWebhook(t, e, e.Owner.Token, rc.srv.URL, "*")
	rc.setSecret(secret)
	touchWorkspace(t, e, e.Owner, "once")
	waitFor(t, 30*time.Second, "a successful third attempt, recorded", func() bool {
		l := e.do("GET", "/api/v1/webhooks/"+id+"/deliveries", e.Owner.Token, nil).List()
		return len(l) > 0 && l[0].(map[string]any)["status"] == data.DeliverySucceeded
	})
	got, posts, bad := rc.snapshot()
	if posts != 3 || len(bad) > 0 {
		t.Fatalf("receiver saw %d posts (bad: %v), want 3", posts, bad)
	}
	r := e.do("GET", "/api/v1/webhooks/"+id+"/deliveries", e.Owner.Token, nil)
	expect(t, r, 200)
	list := r.List()
	if len(list) != 3 {
		t.Fatalf("deliveries: %s", r.Body)
	}
	want := []struct {
		attempt float64
		status  string
		code    float64
	}{{3, data.DeliverySucceeded, 200}, {2, data.DeliveryRetrying, 500}, {1, data.DeliveryRetrying, 500}}
	for i, w := range want {
		d := list[i].(map[string]any)
		if d["attempt"] != w.attempt || d["status"] != w.status || d["response_status"] != w.code || d["event_id"] != got[0].ID || d["event_type"] != data.EventWorkspaceUpdated {
			t.Errorf("delivery %d = %v, want attempt %v %s %v", i, d, w.attempt, w.status, w.code)
		}
		if (w.status == data.DeliveryRetrying) != (d["next_attempt_at"] != nil) || (w.status == data.DeliveryRetrying) != (d["error"] != nil) {
			t.Errorf("delivery %d: next_attempt_at %v, error %v", i, d["next_attempt_at"], d["error"])
		}
	}

	// A manual retry of the succeeded delivery sends the same event (same webhook-id) again.
	first := list[0].(map[string]any)["id"].(string)
	r = e.do("POST", "/api/v1/webhooks/"+id+"/deliveries/"+first+"/retry", e.Owner.Token, nil)
	expect(t, r, 202)
	if r.Data()["status"] != data.DeliveryPending || r.Data()["attempt"] != 1.0 {
		t.Fatalf("retry: %s", r.Body)
	}
	waitFor(t, 30*time.Second, "the manual retry", func() bool { g, _, _ := rc.snapshot(); return len(g) == 2 })
	if g, _, _ := rc.snapshot(); g[1].ID != g[0].ID || g[1].Timestamp == "" {
		t.Fatalf("retry delivered %+v", g)
	}
	expect(t, e.do("POST", "/api/v1/webhooks/"+id+"/deliveries/dlv_00000000000000000000000000/retry", e.Owner.Token, nil), 404)
}

func TestRetriesEndInFailure(t *testing.T) {
	e := newEnv(t)
	startDispatcher(t, e, time.Millisecond)
	rc := newReceiver(t, func(int) int { return 503 })
	id, secret := createWebhook(t, e, e.Owner.Token, rc.srv.URL, "*")
	rc.setSecret(secret)
	touchWorkspace(t, e, e.Owner, "x")
	waitFor(t, 30*time.Second, "a failed delivery", func() bool {
		l := e.do("GET", "/api/v1/webhooks/"+id+"/deliveries", e.Owner.Token, nil).List()
		return len(l) == 2 && l[0].(map[string]any)["status"] == data.DeliveryFailed
	})
	if _, posts, _ := rc.snapshot(); posts != 2 {
		t.Fatalf("%d posts with a one-step schedule, want 2", posts)
	}
}

func TestReplayRange(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	id, secret := createWebhook(t, e, e.Owner.Token, rc.srv.URL, data.EventWorkspaceUpdated)
	rc.setSecret(secret)
	start := time.Now().Add(-time.Second)
	for i := range 4 {
		touchWorkspace(t, e, e.Owner, fmt.Sprint("n", i))
	}
	other := e.newUser("m@example.com", false)
	expect(t, e.do("POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users", e.Owner.Token, map[string]any{"id": other.ID, "role": "member"}), 201)
	startDispatcher(t, e)
	waitFor(t, 30*time.Second, "the first deliveries", func() bool { g, _, _ := rc.snapshot(); return len(g) == 4 })

	expectFields(t, e.do("POST", "/api/v1/webhooks/"+id+"/replay", e.Owner.Token, map[string]any{"from": "yesterday"}), "from", "to")
	expectFields(t, e.do("POST", "/api/v1/webhooks/"+id+"/replay", e.Owner.Token, map[string]any{"from": time.Now().Format(time.RFC3339), "to": start.Format(time.RFC3339)}), "to")
	r := e.do("POST", "/api/v1/webhooks/"+id+"/replay", e.Owner.Token, map[string]any{"from": start.Format(time.RFC3339Nano), "to": time.Now().Add(time.Second).Format(time.RFC3339Nano)})
	expect(t, r, 202)
	if r.Data()["count"] != 4.0 {
		t.Fatalf("replay queued %v events, want the 4 subscribed ones (not workspace_user.added): %s", r.Data()["count"], r.Body)
	}
	waitFor(t, 30*time.Second, "the replayed deliveries", func() bool { g, _, _ := rc.snapshot(); return len(g) == 8 })
	// Workers post concurrently, so the order of arrival is not guaranteed: compare sets.
	got, _, bad := rc.snapshot()
	first, again := map[string]bool{}, map[string]bool{}
	for i := range 4 {
		first[got[i].ID], again[got[i+4].ID] = true, true
	}
	if fmt.Sprint(first) != fmt.Sprint(again) || len(first) != 4 || len(bad) > 0 {
		t.Fatalf("replay sent other events: %v then %v (bad %v)", first, again, bad)
	}
}

func TestAuditLog(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	for i := range 3 {
		touchWorkspace(t, e, e.Owner, fmt.Sprint("name ", i))
	}
	dev := e.newUser("dev@example.com", false)
	expect(t, e.do("POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users", tok, map[string]any{"id": dev.ID, "role": "admin"}), 201)
	devTok := e.tokenIn(dev, e.Owner.WorkspaceID)
	expect(t, e.do("PUT", "/api/v1/workspaces/"+e.Owner.WorkspaceID, devTok, map[string]any{"description": "by admin"}), 200)

	r := e.do("GET", "/api/v1/audit-log?per_page=2", tok, nil)
	expect(t, r, 200)
	l := r.List()
	first := l[0].(map[string]any)
	if len(l) != 2 || first["type"] != data.EventWorkspaceUpdated || first["actor"].(map[string]any)["user_id"] != dev.ID || first["hash"] == "" || first["prev_hash"] == "" {
		t.Fatalf("newest first with actor and chain: %s", r.Body)
	}
	// Before it: the admin's new API key (api_key.created), which links to it.
	if l[1].(map[string]any)["type"] != data.EventAPIKeyCreated || first["prev_hash"] != l[1].(map[string]any)["hash"] {
		t.Fatalf("chain does not link: %s", r.Body)
	}
	// Walk every page: 7 events (the owner's test key, three renames, the member, the
	// admin's key, the admin's change), none twice.
	seen := map[string]bool{}
	for cursor := ""; ; {
		r = e.do("GET", "/api/v1/audit-log?per_page=2&cursor="+cursor, tok, nil)
		expect(t, r, 200)
		for _, x := range r.List() {
			seen[x.(map[string]any)["id"].(string)] = true
		}
		next, _ := r.Meta()["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != 7 {
		t.Fatalf("walked %d events, want 7", len(seen))
	}

	r = e.do("GET", "/api/v1/audit-log?type=workspace.updated&actor="+e.Owner.ID, tok, nil)
	expect(t, r, 200)
	if len(r.List()) != 3 {
		t.Fatalf("filter by type and actor: %s", r.Body)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if r = e.do("GET", "/api/v1/audit-log?from="+future, tok, nil); len(r.List()) != 0 {
		t.Fatalf("from in the future: %s", r.Body)
	}
	if r = e.do("GET", "/api/v1/audit-log?to="+future, tok, nil); len(r.List()) != 7 {
		t.Fatalf("to in the future: %s", r.Body)
	}
	expectFields(t, e.do("GET", "/api/v1/audit-log?type=nope&actor=bob&from=monday", tok, nil), "type", "actor", "from")
	expectFields(t, e.do("GET", "/api/v1/audit-log?type=workspace.updated&cursor="+cursorOf(t, e, tok), tok, nil), "cursor")

	// Developers and members may not read it.
	expect(t, e.do("PUT", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users/"+dev.ID, tok, map[string]any{"role": "developer"}), 200)
	expect(t, e.do("GET", "/api/v1/audit-log", devTok, nil), 403)
}

// cursorOf returns a next_cursor of the unfiltered audit log, to use under other filters.
func cursorOf(t *testing.T, e *env, tok string) string {
	c, _ := e.do("GET", "/api/v1/audit-log?per_page=1", tok, nil).Meta()["next_cursor"].(string)
	if c == "" {
		t.Fatal("no cursor")
	}
	return c
}

func TestDispatcherStopsWithoutLeaks(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(n int) int { return 200 })
	_, secret := createWebhook(t, e, e.Owner.Token, rc.srv.URL, "*")
	rc.setSecret(secret)
	runtime.GC()
	before := runtime.NumGoroutine()

	d := webhook.NewDispatcher(cli.NewServices(e.DB).Deliveries, webhook.Config{AllowPrivate: true, Workers: 8})
	e.DB.SetEventHook(d.Wake)
	d.Start(context.Background())
	for i := range 20 {
		touchWorkspace(t, e, e.Owner, fmt.Sprint("n", i))
	}
	waitFor(t, 30*time.Second, "20 deliveries", func() bool { g, _, _ := rc.snapshot(); return len(g) == 20 })
	if runtime.NumGoroutine() <= before {
		t.Fatal("the dispatcher runs no goroutines?")
	}
	e.DB.SetEventHook(nil)
	if err := d.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	rc.srv.CloseClientConnections()
	waitFor(t, 30*time.Second, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= before })
}

func TestLoopbackRefusedWithoutAllowPrivate(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	id, secret := createWebhook(t, e, e.Owner.Token, rc.srv.URL, "*")
	rc.setSecret(secret)
	d := webhook.NewDispatcher(cli.NewServices(e.DB).Deliveries, webhook.Config{Schedule: []time.Duration{}})
	e.DB.SetEventHook(d.Wake)
	d.Start(context.Background())
	t.Cleanup(func() { e.DB.SetEventHook(nil); d.Stop(context.Background()) })
	touchWorkspace(t, e, e.Owner, "x")
	waitFor(t, 30*time.Second, "a refused delivery", func() bool {
		l := e.do("GET", "/api/v1/webhooks/"+id+"/deliveries", e.Owner.Token, nil).List()
		return len(l) == 1 && l[0].(map[string]any)["status"] == data.DeliveryFailed &&
			strings.Contains(fmt.Sprint(l[0].(map[string]any)["error"]), "SSRF guard")
	})
	if _, posts, _ := rc.snapshot(); posts != 0 {
		t.Fatalf("the guard let %d posts reach loopback", posts)
	}
}
