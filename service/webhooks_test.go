package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// as is an admin of ws calling through the API: webhooks and the audit log are theirs.
func as(ws string) context.Context {
	return data.WithPrincipal(context.Background(), &data.Principal{UserID: "usr_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6", WorkspaceID: ws,
		Role: data.RoleAdmin, Modules: data.EffectiveModules(data.RoleAdmin, nil)})
}

// fixedClock is a settable clock.
type fixedClock struct{ t time.Time }

func (c *fixedClock) now() time.Time { return c.t }

// newServices opens a database and the services on it with clock and the URL guard.
func newServices(t *testing.T, clock *fixedClock, guard func(string) error) (*service.Services, service.Store) {
	db := testkit.OpenEngine(t)
	return testkit.Services(t, db, func(o *service.Options) {
		o.Now, o.URLGuard = clock.now, guard
	}), db
}

// stored reads a webhook as storage holds it.
func stored(t *testing.T, store service.Store, id string) *data.WebhookRecord {
	var w *data.WebhookRecord
	if err := store.View(context.Background(), func(tx service.Tx) error {
		var err error
		w, err = tx.Webhook(id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWebhookRulesRunInTheServiceWithItsGuardAndClock(t *testing.T) {
	clock := &fixedClock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	var guarded []string
	guard := func(u string) error {
		guarded = append(guarded, u)
		if strings.Contains(u, "internal") {
			return errors.New("refused")
		}
		return nil
	}
	svc, store := newServices(t, clock, guard)
	ctx := as("ws_1")

	// The guard refuses a well-formed URL: 422 on url, nothing stored.
	_, _, err := svc.Webhooks.CreateWebhook(ctx, data.WebhookCreate{URL: "https://internal.example/h", Events: []string{"*"}})
	if fieldsOf(err) != "url" {
		t.Fatalf("guarded url: %v, want a 422 on url", err)
	}
	// A malformed URL fails the form check; the guard is not asked.
	guarded = nil
	_, _, err = svc.Webhooks.CreateWebhook(ctx, data.WebhookCreate{URL: "ftp://x", Events: []string{"nope"}})
	if fieldsOf(err) != "events.0 url" || len(guarded) != 0 {
		t.Fatalf("malformed url: %v, guard asked %v", err, guarded)
	}
	if list, _, _ := svc.Webhooks.ListWebhooks(ctx, data.PageRequest{}); len(list) != 0 {
		t.Fatalf("refused creates stored %d webhooks", len(list))
	}

	w, secret, err := svc.Webhooks.CreateWebhook(ctx, data.WebhookCreate{URL: "https://example.com/h", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	if !w.CreatedAt.Equal(clock.t) || w.WorkspaceID != "ws_1" || !w.Enabled {
		t.Errorf("created %+v; want the service clock's time, the caller's workspace, enabled", w)
	}
	// The secret is sealed by the service; storage keeps what it was given.
	rec := stored(t, store, w.ID)
	if rec.SealedSecret == "" || strings.Contains(rec.SealedSecret, strings.TrimPrefix(secret, "whsec_")) {
		t.Errorf("stored secret %q is not sealed", rec.SealedSecret)
	}

	// An update is checked by the same guard, and stamped by the same clock.
	clock.t = clock.t.Add(time.Hour)
	if _, err := svc.Webhooks.UpdateWebhook(ctx, w.ID, data.WebhookUpdate{URL: data.Some("https://internal.example/x")}); fieldsOf(err) != "url" {
		t.Errorf("guarded update: %v", err)
	}
	up, err := svc.Webhooks.UpdateWebhook(ctx, w.ID, data.WebhookUpdate{Description: data.Some("d")})
	if err != nil || !up.UpdatedAt.Equal(clock.t) || !up.CreatedAt.Equal(clock.t.Add(-time.Hour)) {
		t.Errorf("update: %+v, %v", up, err)
	}

	// Decoding faults the server found come back with the rules' faults, in one 422.
	withFaults := data.WithInputFaults(ctx, data.FieldError("secret", "The secret field is not allowed."))
	if _, _, err := svc.Webhooks.CreateWebhook(withFaults, data.WebhookCreate{Events: []string{"*"}}); fieldsOf(err) != "secret url" {
		t.Errorf("decode faults with rule faults: %v", err)
	}
	if _, err := svc.Webhooks.UpdateWebhook(withFaults, w.ID, data.WebhookUpdate{}); fieldsOf(err) != "secret" {
		t.Errorf("decode faults alone: %v", err)
	}

	// Another workspace sees nothing.
	if _, err := svc.Webhooks.Webhook(as("ws_2"), w.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("another workspace's webhook: %v", err)
	}
	if err := svc.Webhooks.DeleteWebhook(as("ws_2"), w.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Errorf("another workspace's delete: %v", err)
	}
}

// fieldsOf lists a validation error's field paths, sorted, space-separated.
func fieldsOf(err error) string {
	var e *data.Error
	if !errors.As(err, &e) || e.Code != data.EINVALID {
		return "not a 422: " + errString(err)
	}
	return strings.Join(e.SortedFieldPaths(), " ")
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
