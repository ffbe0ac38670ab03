package storetest

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"conversations_open", testOpenConversations})
}

// testOpenConversations: a workspace's open conversations are its active ones updated
// after a time or leased past another (both strict), at most the limit; ended ones,
// other workspaces' and a deleted workspace's are not counted, and each write moves the
// count.
func testOpenConversations(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ws1, ws2 := g.New(data.PrefixWorkspace), g.New(data.PrefixWorkspace)
	early, late, leased := storedConversation(g, ws1, t0), storedConversation(g, ws1, t0.Add(time.Minute)), storedConversation(g, ws1, t0)
	leased.Lease = &data.ConversationLease{Token: "tok", Until: data.NewTime(t0.Add(40 * time.Minute))}
	ended, other := storedConversation(g, ws1, t0.Add(time.Hour)), storedConversation(g, ws2, t0.Add(time.Hour))
	endedAt, reason := data.NewTime(t0.Add(time.Hour)), data.EndUserEnded
	ended.Status, ended.EndedAt, ended.DisconnectionReason = data.ConversationEnded, &endedAt, &reason
	update(t, s, func(tx service.Tx) error {
		for _, w := range []string{ws1, ws2} {
			if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: w, Name: w, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}}); err != nil {
				return err
			}
		}
		for _, c := range []*data.StoredConversation{early, late, leased, ended, other} {
			if err := tx.InsertConversation(c, nil); err != nil {
				return err
			}
		}
		return nil
	})
	ms := time.Millisecond
	far := t0.Add(24 * time.Hour)
	cases := []struct {
		name                      string
		ws                        string
		updatedAfter, leasedAfter time.Time
		limit, want               int
	}{
		{"every active one", ws1, t0.Add(-ms), far, 10, 3},
		{"the limit", ws1, t0.Add(-ms), far, 2, 2},
		{"updated at the time is not after it", ws1, t0, far, 10, 1},
		{"updated just after", ws1, t0.Add(time.Minute - ms), far, 10, 1},
		{"updated at the later one", ws1, t0.Add(time.Minute), far, 10, 0},
		{"leased past the time", ws1, t0.Add(time.Minute), t0.Add(40*time.Minute - ms), 10, 1},
		{"leased until the time is not past it", ws1, t0.Add(time.Minute), t0.Add(40 * time.Minute), 10, 0},
		{"another workspace", ws2, t0.Add(-ms), far, 10, 1},
		{"an unknown workspace", "ws_none", t0.Add(-ms), far, 10, 0},
	}
	count := func(ws string, updatedAfter, leasedAfter time.Time, limit int) int {
		t.Helper()
		var n int
		view(t, s, func(tx service.Tx) (err error) {
			n, err = tx.OpenConversations(ws, updatedAfter, leasedAfter, limit)
			return err
		})
		return n
	}
	for _, c := range cases {
		if n := count(c.ws, c.updatedAfter, c.leasedAfter, c.limit); n != c.want {
			t.Errorf("%s: OpenConversations = %d, want %d", c.name, n, c.want)
		}
	}
	// A turn moves early's update on; its lease freed, leased counts by its update only.
	early.UpdatedAt = data.NewTime(t0.Add(2 * time.Hour))
	leased.Lease = nil
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutConversation(early, nil); err != nil {
			return err
		}
		return tx.PutConversation(leased, nil)
	})
	if n := count(ws1, t0.Add(time.Hour), t0, 10); n != 1 {
		t.Errorf("after a turn and a lease freed: %d open past t0+1h, want 1 (the one updated)", n)
	}
	// Ending one takes it out.
	endedAt = data.NewTime(t0.Add(3 * time.Hour))
	early.Status, early.EndedAt, early.DisconnectionReason = data.ConversationEnded, &endedAt, &reason
	update(t, s, func(tx service.Tx) error { return tx.PutConversation(early, nil) })
	if n := count(ws1, t0.Add(-ms), far, 10); n != 2 {
		t.Errorf("after one ended: %d open, want 2", n)
	}
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace(ws1) })
	if n := count(ws1, t0.Add(-ms), far, 10); n != 0 {
		t.Errorf("a deleted workspace has %d open conversations", n)
	}
	if n := count(ws2, t0.Add(-ms), far, 10); n != 1 {
		t.Errorf("the other workspace has %d open after the delete, want 1", n)
	}
}
