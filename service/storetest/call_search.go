package storetest

import (
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func hitIDs(list []*data.CallHit) []string {
	out := make([]string, len(list))
	for i, h := range list {
		out[i] = h.ID
	}
	return out
}

// searchAll walks every next page of a search, per_page 2.
func searchAll(t *testing.T, tx service.Tx, ws string, agents []string, f data.CallFilter, s data.CallSearch) []string {
	t.Helper()
	var out []string
	req := data.PageRequest{PerPage: 2}
	for range 50 {
		list, page, err := tx.SearchCalls(ws, agents, f, s, req)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, hitIDs(list)...)
		if page.NextCursor == nil {
			return out
		}
		req.Cursor = *page.NextCursor
	}
	t.Fatal("the pages do not end")
	return nil
}

func terms(sort string, t ...string) data.CallSearch {
	return data.CallSearch{Q: "q", Terms: t, Sort: sort}
}

// testCallSearch holds SetCallTerms and SearchCalls to their contracts.
func testCallSearch(t *testing.T, open Opener) {
	f := seedSearchCalls(t, open(t))
	view(t, f.s, func(tx service.Tx) error {
		f.checkSearches(t, tx)
		f.checkScoresAndCursors(t, tx)
		return nil
	})
	late := f.checkRelevanceWindowAnchored(t)
	f.checkTermChanges(t, late)
	// A workspace's deletion takes its postings: the workspace made again finds nothing.
	update(t, f.s, func(tx service.Tx) error { return tx.DeleteWorkspace("ws_2") })
	view(t, f.s, func(tx service.Tx) error {
		if got := searchAll(t, tx, "ws_2", nil, data.CallFilter{}, terms(data.SortCreatedAt, "cancel")); got != nil {
			t.Errorf("a deleted workspace's search: %v", got)
		}
		return nil
	})
}

// searchFixture is six calls of ws_1 under agents a and b (odd ones b's) with the terms
// idx, and one of ws_2 holding "cancel".
type searchFixture struct {
	s    service.Store
	g    *data.IDGen
	a, b string
	c    []*data.Call
	idx  []map[string]int
}

// seedSearchCalls writes the fixture's calls and their terms into s.
func seedSearchCalls(t *testing.T, s service.Store) *searchFixture {
	t.Helper()
	f := &searchFixture{s: s, g: stepIDs()}
	f.a, f.b = f.g.New(data.PrefixAgent), f.g.New(data.PrefixAgent)
	for i := range 6 {
		agent := f.a
		if i%2 == 1 {
			agent = f.b
		}
		f.c = append(f.c, newCall(f.g, "ws_1", agent, data.DirectionWeb, data.CallEnded))
	}
	other := newCall(f.g, "ws_2", f.a, data.DirectionWeb, data.CallEnded)
	f.idx = []map[string]int{
		{"cancel": 1, "order": 2},
		{"cancel": 3, "refund": 1},
		{"refund": 1},
		{"cancel": 1, "refund": 2, "order": 1},
		{"hello": 1},
		{"cancel": 2},
	}
	update(t, s, func(tx service.Tx) error {
		for i, call := range f.c {
			if err := tx.InsertCall(call); err != nil {
				return err
			}
			if err := tx.SetCallTerms("ws_1", call.ID, nil, f.idx[i]); err != nil {
				return err
			}
		}
		if err := tx.InsertCall(other); err != nil {
			return err
		}
		return tx.SetCallTerms("ws_2", other.ID, nil, map[string]int{"cancel": 1})
	})
	return f
}

// ids names the fixture's calls by their index.
func (f *searchFixture) ids(is ...int) []string {
	var out []string
	for _, i := range is {
		out = append(out, f.c[i].ID)
	}
	return out
}

// checkSearches walks every page of each search and compares the ids found.
func (f *searchFixture) checkSearches(t *testing.T, tx service.Tx) {
	t.Helper()
	a, b, c, ids := f.a, f.b, f.c, f.ids
	for _, tc := range []struct {
		name   string
		agents []string
		f      data.CallFilter
		s      data.CallSearch
		want   []string
	}{
		{"one term, newest first", nil, data.CallFilter{}, terms(data.SortCreatedAt, "cancel"), ids(5, 3, 1, 0)},
		{"and", nil, data.CallFilter{}, terms(data.SortCreatedAt, "cancel", "refund"), ids(3, 1)},
		{"three terms", nil, data.CallFilter{}, terms(data.SortCreatedAt, "refund", "order", "cancel"), ids(3)},
		{"a term no call holds", nil, data.CallFilter{}, terms(data.SortCreatedAt, "cancel", "zebra"), nil},
		{"no terms", nil, data.CallFilter{}, terms(data.SortCreatedAt), nil},
		{"with a filter", nil, data.CallFilter{AgentID: b}, terms(data.SortCreatedAt, "cancel"), ids(5, 3, 1)},
		{"limited to agents", []string{a}, data.CallFilter{}, terms(data.SortCreatedAt, "cancel"), ids(0)},
		{"limited, none", []string{}, data.CallFilter{}, terms(data.SortCreatedAt, "cancel"), nil},
		{"range", nil, data.CallFilter{From: c[1].CreatedAt.Time, To: c[5].CreatedAt.Time}, terms(data.SortCreatedAt, "cancel"), ids(3, 1)},
		{"relevance", nil, data.CallFilter{}, terms(data.SortRelevance, "cancel"), ids(1, 5, 3, 0)},
		{"relevance, and", nil, data.CallFilter{}, terms(data.SortRelevance, "refund", "cancel"), ids(3, 1)},
		{"relevance, filtered", nil, data.CallFilter{AgentID: a}, terms(data.SortRelevance, "cancel"), ids(0)},
	} {
		if got := searchAll(t, tx, "ws_1", tc.agents, tc.f, tc.s); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// checkScoresAndCursors checks a hit's score (holding the term more often ranks higher)
// and the cursors under each sort: back from the second page is the first; another sort
// or query, or the plain list, refuses it.
func (f *searchFixture) checkScoresAndCursors(t *testing.T, tx service.Tx) {
	t.Helper()
	hits, _, err := tx.SearchCalls("ws_1", nil, data.CallFilter{}, terms(data.SortCreatedAt, "cancel"), data.PageRequest{PerPage: 10})
	if err != nil || len(hits) != 4 || hits[0].Search == nil || !(hits[2].Search.Score > hits[3].Search.Score) || hits[2].Status != data.CallEnded {
		t.Errorf("hits = %+v, %v", hits, err)
	}
	for _, sort := range data.CallSorts {
		q := terms(sort, "cancel")
		first, p1, err := tx.SearchCalls("ws_1", nil, data.CallFilter{}, q, data.PageRequest{PerPage: 2})
		if err != nil || p1.NextCursor == nil || p1.PrevCursor != nil {
			t.Fatalf("%s: first page %v %+v", sort, err, p1)
		}
		_, p2, err := tx.SearchCalls("ws_1", nil, data.CallFilter{}, q, data.PageRequest{PerPage: 2, Cursor: *p1.NextCursor})
		if err != nil || p2.PrevCursor == nil {
			t.Fatalf("%s: second page %v %+v", sort, err, p2)
		}
		back, _, err := tx.SearchCalls("ws_1", nil, data.CallFilter{}, q, data.PageRequest{PerPage: 2, Cursor: *p2.PrevCursor})
		if err != nil || !slices.Equal(hitIDs(back), hitIDs(first)) {
			t.Errorf("%s: back %v, want %v (%v)", sort, hitIDs(back), hitIDs(first), err)
		}
		for _, wrong := range []data.CallSearch{terms(otherSort(sort), "cancel"), terms(sort, "refund"), terms(sort, "cancel", "order")} {
			if _, _, err := tx.SearchCalls("ws_1", nil, data.CallFilter{}, wrong, data.PageRequest{Cursor: *p1.NextCursor}); data.ErrorCode(err) != data.EINVALID {
				t.Errorf("%s cursor under %+v: %v", sort, wrong, err)
			}
		}
		if _, _, err := tx.Calls("ws_1", nil, data.CallFilter{}, data.PageRequest{Cursor: *p1.NextCursor}); data.ErrorCode(err) != data.EINVALID {
			t.Errorf("%s cursor in the plain list: %v", sort, err)
		}
		// Bound to the caller's agents too: replayed by a caller limited to some, refused.
		if _, _, err := tx.SearchCalls("ws_1", []string{"agt_a"}, data.CallFilter{}, q, data.PageRequest{Cursor: *p1.NextCursor}); data.ErrorCode(err) != data.EINVALID {
			t.Errorf("%s cursor replayed by a caller limited to an agent: %v", sort, err)
		}
	}
}

// checkRelevanceWindowAnchored checks that a relevance window is anchored: a call added
// after the first page does not shift the pages that follow. It returns that call.
func (f *searchFixture) checkRelevanceWindowAnchored(t *testing.T) *data.Call {
	t.Helper()
	var p1 data.Page
	view(t, f.s, func(tx service.Tx) error {
		var err error
		_, p1, err = tx.SearchCalls("ws_1", nil, data.CallFilter{}, terms(data.SortRelevance, "cancel"), data.PageRequest{PerPage: 2})
		return err
	})
	late := newCall(f.g, "ws_1", f.a, data.DirectionWeb, data.CallEnded)
	update(t, f.s, func(tx service.Tx) error {
		if err := tx.InsertCall(late); err != nil {
			return err
		}
		return tx.SetCallTerms("ws_1", late.ID, nil, map[string]int{"cancel": 9})
	})
	view(t, f.s, func(tx service.Tx) error {
		rest, _, err := tx.SearchCalls("ws_1", nil, data.CallFilter{}, terms(data.SortRelevance, "cancel"), data.PageRequest{PerPage: 2, Cursor: *p1.NextCursor})
		if err != nil || !slices.Equal(hitIDs(rest), f.ids(3, 0)) {
			t.Errorf("second relevance page after an insert: %v %v", hitIDs(rest), err)
		}
		return nil
	})
	return late
}

// checkTermChanges checks that replacing terms moves the postings, bad terms write
// nothing and deletes remove them (late's terms among them).
func (f *searchFixture) checkTermChanges(t *testing.T, late *data.Call) {
	t.Helper()
	c, idx, ids := f.c, f.idx, f.ids
	update(t, f.s, func(tx service.Tx) error {
		if err := tx.SetCallTerms("ws_1", c[1].ID, idx[1], map[string]int{"refund": 1, "hello": 4}); err != nil {
			return err
		}
		for _, bad := range []map[string]int{{"x": 0}, {"x": 256}, {"": 1}} {
			if err := tx.SetCallTerms("ws_1", c[2].ID, idx[2], bad); err == nil {
				t.Errorf("SetCallTerms(%v) = nil", bad)
			}
		}
		if err := tx.DeleteCall(c[3].ID, idx[3]); err != nil {
			return err
		}
		return tx.SetCallTerms("ws_1", late.ID, map[string]int{"cancel": 9}, nil)
	})
	view(t, f.s, func(tx service.Tx) error {
		if got := searchAll(t, tx, "ws_1", nil, data.CallFilter{}, terms(data.SortCreatedAt, "cancel")); !slices.Equal(got, ids(5, 0)) {
			t.Errorf("cancel after the changes: %v", got)
		}
		if got := searchAll(t, tx, "ws_1", nil, data.CallFilter{}, terms(data.SortRelevance, "hello")); !slices.Equal(got, ids(1, 4)) {
			t.Errorf("hello after the changes: %v", got)
		}
		if got := searchAll(t, tx, "ws_1", nil, data.CallFilter{}, terms(data.SortCreatedAt, "refund")); !slices.Equal(got, ids(2, 1)) {
			t.Errorf("refund after the changes (c2's bad terms must not be written): %v", got)
		}
		return nil
	})
}

func otherSort(s string) string {
	if s == data.SortRelevance {
		return data.SortCreatedAt
	}
	return data.SortRelevance
}
