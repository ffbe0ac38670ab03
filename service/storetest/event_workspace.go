package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testEventWorkspace: an engine with the optional service.EventWorkspaceTx gives the
// workspace Event would, for small and large payloads (a payload that names another
// workspace_id of its own included), and "" for an event that is not stored.
func testEventWorkspace(t *testing.T, open Opener) {
	s := open(t)
	var events []*data.Event
	big := fmt.Sprintf(`{"workspace_id":"ws_payload","prompt":%q}`, strings.Repeat("You are support. ", 400))
	for i, payload := range []string{`{}`, big, `null`} {
		e := &data.Event{ID: ids.New(data.PrefixEvent), Type: data.EventAgentUpdated, WorkspaceID: fmt.Sprint("ws_", i),
			Actor: data.Actor{Type: "user", UserID: "usr_1"}, Data: []byte(payload), Hash: fmt.Sprint("h", i)}
		events = append(events, e)
		update(t, s, func(tx service.Tx) error { return tx.AppendEvent(e) })
	}
	view(t, s, func(tx service.Tx) error {
		wt, ok := tx.(service.EventWorkspaceTx)
		if !ok {
			t.Skip("the engine reads whole events (no service.EventWorkspaceTx)")
		}
		for _, e := range events {
			if ws, err := wt.EventWorkspace(e.ID); err != nil || ws != e.WorkspaceID {
				t.Errorf("EventWorkspace(%s) = %q, %v; want %q", e.ID, ws, err, e.WorkspaceID)
			}
		}
		if ws, err := wt.EventWorkspace("evt_none"); err != nil || ws != "" {
			t.Errorf("EventWorkspace of an event not stored = %q, %v; want empty", ws, err)
		}
		return nil
	})
}
