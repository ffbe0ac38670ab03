package service_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// callEventData returns the payloads of the workspace's call.registered events by id.
func callEventData(t *testing.T, e *callsEnv) map[string][]byte {
	t.Helper()
	list, _, err := e.svc.Audit.ListAuditLog(e.owner, data.AuditFilter{Type: data.EventCallRegistered}, data.PageRequest{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, ev := range list {
		out[ev.ID] = append([]byte(nil), ev.Data...)
	}
	return out
}

// A call's events keep their payloads byte for byte when a retention sweep deletes the
// call (bbolt stores them as references to the call until then).
func TestRetentionKeepsCallEvents(t *testing.T) {
	e := newCallsEnv(t)
	if _, err := e.svc.Workspaces.UpdateWorkspace(e.owner, e.ws, data.WorkspaceUpdate{Privacy: data.Some(data.WorkspacePrivacyPatch{RetentionDays: data.Some(days(30))})}); err != nil {
		t.Fatal(err)
	}
	first, second := e.register(t, e.a), e.register(t, e.b)
	before := callEventData(t, e)
	if len(before) != 2 {
		t.Fatalf("%d call.registered events", len(before))
	}
	e.now = e.now.Add(31 * 24 * time.Hour)
	if _, err := e.svc.Retention.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.exists(t, first) || e.exists(t, second) {
		t.Fatal("the sweep kept an expired call")
	}
	after := callEventData(t, e)
	for id, payload := range before {
		if !bytes.Equal(after[id], payload) {
			t.Errorf("event %s changed when its call was swept:\n%s\n%s", id, payload, after[id])
		}
	}
}
