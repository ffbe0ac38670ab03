package bolt

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// walkCalls follows next_cursor to the end, then prev_cursor back to the start, and
// returns both walks.
func walkCalls(t *testing.T, db *DB, c contextT, f data.CallFilter, perPage int) (forward, backward []string) {
	t.Helper()
	req := data.PageRequest{PerPage: perPage}
	var pages [][]string
	var metas []data.Page
	for range 1000 {
		list, meta, err := svcOf(db).Calls.ListCalls(c, f, req)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, call := range list {
			ids = append(ids, call.ID)
		}
		pages, metas = append(pages, ids), append(metas, meta)
		forward = append(forward, ids...)
		if meta.NextCursor == nil {
			break
		}
		req.Cursor = *meta.NextCursor
	}
	// Back from the last page.
	meta := metas[len(metas)-1]
	for range 1000 {
		if meta.PrevCursor == nil {
			break
		}
		list, m, err := svcOf(db).Calls.ListCalls(c, f, data.PageRequest{PerPage: perPage, Cursor: *meta.PrevCursor})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, call := range list {
			ids = append(ids, call.ID)
		}
		backward = append(ids, backward...)
		meta = m
	}
	if len(pages) > 0 {
		backward = append(backward, pages[len(pages)-1]...)
	}
	return forward, backward
}

func TestCallPagesMergeAgentsAndBoundTheScan(t *testing.T) {
	c := &clock{time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)}
	db := openInternal(t, c)
	ctx, ws := ownerCtx(t, db, "a@example.com")
	agents := []string{newTestAgent(t, db, ws), newTestAgent(t, db, ws), newTestAgent(t, db, ws)}
	var all []*data.Call
	for i := range 90 {
		c.t = c.t.Add(time.Second)
		// web and ended are each about half of the calls, both together only 4 of them.
		in := data.CallCreate{AgentID: agents[i%3], Direction: "outbound", FromNumber: ptr("+15550000000"), ToNumber: ptr("+15550000001"), Status: ptr("failed")}
		if i%2 == 1 {
			in.Direction = "web"
		}
		if i%2 == 0 || i%11 == 0 {
			in.Status = ptr("ended")
		}
		call, err := svcOf(db).Calls.RegisterCall(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		all = append([]*data.Call{call}, all...)
	}
	expected := func(keep func(*data.Call) bool) []string {
		var out []string
		for _, call := range all {
			if keep(call) {
				out = append(out, call.ID)
			}
		}
		return out
	}
	check := func(name string, ctx contextT, f data.CallFilter, perPage int, want []string) {
		t.Helper()
		fwd, back := walkCalls(t, db, ctx, f, perPage)
		if !slices.Equal(fwd, want) {
			t.Errorf("%s forward: %d ids, want %d\n%v\n%v", name, len(fwd), len(want), fwd, want)
		}
		if !slices.Equal(back, want) {
			t.Errorf("%s backward: %d ids, want %d", name, len(back), len(want))
		}
	}
	// A member limited to two agents: their scopes are merged newest first.
	p := *data.PrincipalFrom(ctx)
	p.AgentIDs = agents[:2]
	limited := data.WithPrincipal(ctx, &p)
	check("two agents", limited, data.CallFilter{}, 7, expected(func(c *data.Call) bool { return c.AgentID != agents[2] }))
	check("two agents, web", limited, data.CallFilter{Direction: "web"}, 2, expected(func(c *data.Call) bool { return c.AgentID != agents[2] && c.Direction == "web" }))

	// With a tiny scan bound, rare matches come over short pages but none is lost.
	old := maxCallScan
	maxCallScan = 5
	t.Cleanup(func() { maxCallScan = old })
	rare := func(c *data.Call) bool { return c.Direction == "web" && c.Status == "ended" }
	if n := len(expected(rare)); n != 4 {
		t.Fatalf("fixture has %d rare calls", n)
	}
	check("bounded scan", ctx, data.CallFilter{Status: "ended", Direction: "web"}, 3, expected(rare))
	from, to := all[70].CreatedAt.Time, all[10].CreatedAt.Time
	check("bounded scan in a range", ctx, data.CallFilter{Direction: "web", Status: "ended", From: from, To: to}, 2, expected(func(c *data.Call) bool {
		return rare(c) && !c.CreatedAt.Before(from) && c.CreatedAt.Before(to)
	}))
	if !strings.HasPrefix(all[0].ID, data.PrefixCall) {
		t.Fatal("unexpected id")
	}
}

type contextT = context.Context
