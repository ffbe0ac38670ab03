package service_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// appendChain stores n events of ws linked into its chain in one transaction, as record
// does, and returns them oldest first. mk adjusts each before it is hashed.
func appendChain(t *testing.T, store service.Store, gen *data.IDGen, ws string, n int, mk func(i int, e *data.Event)) []*data.Event {
	t.Helper()
	return appendLinked(t, store, gen, ws, n, mk, func(e *data.Event) string { return service.ChainHash(testkit.ChainKey(), e) })
}

// appendLinked is appendChain with links made by link (a forger's, say).
func appendLinked(t *testing.T, store service.Store, gen *data.IDGen, ws string, n int, mk func(i int, e *data.Event), link func(e *data.Event) string) []*data.Event {
	t.Helper()
	var out []*data.Event
	err := store.Update(context.Background(), func(tx service.Tx) error {
		out = out[:0]
		prev, err := tx.EventHead(ws)
		if err != nil {
			return err
		}
		for i := range n {
			e := &data.Event{ID: gen.New(data.PrefixEvent), Type: data.EventWorkspaceUpdated, WorkspaceID: ws,
				Actor: data.Actor{Type: "system"}, Data: []byte(`{}`), PrevHash: prev}
			if mk != nil {
				mk(i, e)
			}
			e.Hash = link(e)
			if err := tx.AppendEvent(e); err != nil {
				return err
			}
			prev = e.Hash
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAuditFilterAndScanBound(t *testing.T) {
	clock := &fixedClock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc, store := newServices(t, clock, nil)
	gen := data.NewIDGen()
	start := clock.t
	const alice, bob = "usr_01JD6ZJ7Q8W9X0Y1Z2A3B4C5DA", "usr_01JD6ZJ7Q8W9X0Y1Z2A3B4C5DB"
	evs := appendChain(t, store, gen, "ws_1", 6, func(i int, e *data.Event) {
		e.CreatedAt = data.NewTime(start.Add(time.Duration(i) * time.Minute))
		e.Actor = data.Actor{Type: "user", UserID: []string{alice, bob}[i%2]}
		if i >= 4 {
			e.Type = data.EventAgentCreated
		}
	})
	ctx := as("ws_1")
	cases := []struct {
		name string
		f    data.AuditFilter
		want []int // indexes into evs, newest first
	}{
		{"none", data.AuditFilter{}, []int{5, 4, 3, 2, 1, 0}},
		{"type", data.AuditFilter{Type: data.EventAgentCreated}, []int{5, 4}},
		{"actor", data.AuditFilter{Actor: bob}, []int{5, 3, 1}},
		{"from inclusive", data.AuditFilter{From: evs[3].CreatedAt}, []int{5, 4, 3}},
		{"to exclusive", data.AuditFilter{To: evs[2].CreatedAt}, []int{1, 0}},
		{"all four", data.AuditFilter{Type: data.EventWorkspaceUpdated, Actor: alice, From: evs[1].CreatedAt, To: evs[5].CreatedAt}, []int{2}},
	}
	for _, c := range cases {
		list, _, err := svc.Audit.ListAuditLog(ctx, c.f, data.PageRequest{PerPage: 100})
		var got []int
		for _, e := range list {
			for i, x := range evs {
				if x.ID == e.ID {
					got = append(got, i)
				}
			}
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, _, err := svc.Audit.ListAuditLog(ctx, data.AuditFilter{Type: "nope", Actor: "x"}, data.PageRequest{}); fieldsOf(err) != "actor type" {
		t.Errorf("bad filters: %v", err)
	}

	// A filter no index narrows matching nothing reads at most MaxAuditScan events per
	// page and says where to go on; at exactly MaxAuditScan older events there is nothing
	// left to read. A time range is sought (EventFilter.From, To) but for a clock that
	// stepped back: the oldest event an hour after the range, then events with no
	// created_at (before any from), so the range's bounds hold the whole chain.
	appendChain(t, store, gen, "ws_2", service.MaxAuditScan+1, func(i int, e *data.Event) {
		if i == 0 {
			e.CreatedAt = data.NewTime(start.Add(time.Hour))
		}
	})
	f := data.AuditFilter{From: data.NewTime(start), To: data.NewTime(start.Add(time.Millisecond))}
	list, page, err := svc.Audit.ListAuditLog(as("ws_2"), f, data.PageRequest{PerPage: 10})
	if err != nil || len(list) != 0 || page.NextCursor == nil {
		t.Fatalf("first page over %d unmatched events: %d events, next %v, %v", service.MaxAuditScan+1, len(list), page.NextCursor, err)
	}
	list, page, err = svc.Audit.ListAuditLog(as("ws_2"), f, data.PageRequest{PerPage: 10, Cursor: *page.NextCursor})
	if err != nil || len(list) != 0 || page.NextCursor != nil {
		t.Errorf("second page: %d events, next %v, %v; want the end", len(list), page.NextCursor, err)
	}
	// Every cursor these pages offer is taken: the way back leads to the oldest page, cut
	// by the bound walking newer from its start, whose own cursors read too. On
	// PostgreSQL that page offered a next_cursor older than no event, which the list
	// refused as a cursor of another list (422): bbolt's guard was missing there.
	for hops, cursor := 0, page.PrevCursor; cursor != nil && hops < 4; hops++ {
		var back data.Page
		if _, back, err = svc.Audit.ListAuditLog(as("ws_2"), f, data.PageRequest{PerPage: 10, Cursor: *cursor}); err != nil {
			t.Fatalf("a cursor the audit log offered (after %d pages back): %v", hops, err)
		}
		if back.NextCursor != nil {
			if _, _, err := svc.Audit.ListAuditLog(as("ws_2"), f, data.PageRequest{PerPage: 10, Cursor: *back.NextCursor}); err != nil {
				t.Errorf("the next_cursor of a page back: %v", err)
			}
		}
		cursor = back.PrevCursor
	}

	// The one kept event past exactly MaxAuditScan others: the page that holds it offers no
	// prev_cursor, as nothing it keeps lies newer within the bound. On PostgreSQL it had
	// one (bbolt's hasNeighbour said the same once), to a page of nothing with neither
	// cursor: a dead end, and the engines' pages differed.
	appendChain(t, store, gen, "ws_3", service.MaxAuditScan+1, func(i int, e *data.Event) {
		if i == 0 {
			e.Type, e.CreatedAt = data.EventAgentCreated, data.NewTime(start)
		}
	})
	list, page, err = svc.Audit.ListAuditLog(as("ws_3"), f, data.PageRequest{PerPage: 10})
	if err != nil || len(list) != 0 || page.NextCursor == nil {
		t.Fatalf("first page over %d unmatched events: %d events, next %v, %v", service.MaxAuditScan, len(list), page.NextCursor, err)
	}
	list, page, err = svc.Audit.ListAuditLog(as("ws_3"), f, data.PageRequest{PerPage: 10, Cursor: *page.NextCursor})
	if err != nil || len(list) != 1 || page.NextCursor != nil || page.PrevCursor != nil {
		t.Errorf("the page of the kept event: %d events, next %v, prev %v, %v; want it alone, no cursor", len(list), page.NextCursor, page.PrevCursor, err)
	}

	// A type or actor filter walks only its events (their indexes): over the same logs
	// its first page is the last, the one event of its type in it.
	for _, c := range []struct {
		ws   string
		f    data.AuditFilter
		want int
	}{
		{"ws_2", data.AuditFilter{Type: data.EventAgentCreated}, 0},
		{"ws_3", data.AuditFilter{Type: data.EventAgentCreated}, 1},
		{"ws_3", data.AuditFilter{Actor: alice}, 0},
	} {
		list, page, err := svc.Audit.ListAuditLog(as(c.ws), c.f, data.PageRequest{PerPage: 10})
		if err != nil || len(list) != c.want || page.NextCursor != nil || page.PrevCursor != nil {
			t.Errorf("%s, %+v over %d events: %d events, next %v, prev %v, %v; want %d in one page", c.ws, c.f, service.MaxAuditScan+1, len(list), page.NextCursor, page.PrevCursor, err, c.want)
		}
	}
}

func TestVerifyAuditChain(t *testing.T) {
	clock := &fixedClock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc, store := newServices(t, clock, nil)
	gen := data.NewIDGen()
	appendChain(t, store, gen, "ws_1", 3, nil)
	appendChain(t, store, gen, "ws_2", 2, nil)
	problems, n, err := svc.Audit.VerifyAuditChain(context.Background(), "")
	if err != nil || len(problems) != 0 || n != 5 {
		t.Fatalf("intact chains: %v, %d checked, %v", problems, n, err)
	}
	// An event whose prev_hash does not name the hash before it.
	bad := appendChain(t, store, gen, "ws_2", 2, func(i int, e *data.Event) {
		if i == 1 {
			e.PrevHash = "not-the-previous-hash"
		}
	})
	problems, n, err = svc.Audit.VerifyAuditChain(context.Background(), "ws_2")
	if err != nil || n != 4 || len(problems) != 1 || problems[0].EventID != bad[1].ID || problems[0].WorkspaceID != "ws_2" {
		t.Errorf("a broken link: %+v, %d checked, %v", problems, n, err)
	}
}

// A chain rewritten consistently by someone without the instance's key does not verify:
// neither links under another key nor the unkeyed SHA-256 links of old.
func TestChainRewriteNeedsTheKey(t *testing.T) {
	clock := &fixedClock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc, store := newServices(t, clock, nil)
	gen := data.NewIDGen()
	otherKey := make([]byte, 32)
	forgers := map[string]func(e *data.Event) string{
		"another key": func(e *data.Event) string { return service.ChainHash(otherKey, e) },
		"unkeyed": func(e *data.Event) string {
			e.Hash = ""
			sum := sha256.Sum256(mustJSON(t, e))
			return hex.EncodeToString(sum[:])
		},
	}
	for name, forge := range forgers {
		ws := "ws_" + strings.ReplaceAll(name, " ", "_")
		appendLinked(t, store, gen, ws, 3, nil, forge)
		problems, n, err := svc.Audit.VerifyAuditChain(context.Background(), ws)
		if err != nil || n != 3 || len(problems) != 3 {
			t.Errorf("%s: a forged chain gives %d problems in %d events (%v), want one per event", name, len(problems), n, err)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
