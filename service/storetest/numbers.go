package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// stepIDs makes time-ordered ids on a clock that moves a millisecond per id, so that the
// order of creation is the order of the ids.
func stepIDs() *data.IDGen {
	at := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	return &data.IDGen{Now: func() time.Time { at = at.Add(time.Millisecond); return at }, Rand: zeros{}}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func numberIDs(list []*data.Number) []string {
	out := make([]string, len(list))
	for i, n := range list {
		out[i] = n.ID
	}
	return out
}

func testNumbers(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	agentA, agentB := g.New(data.PrefixAgent), g.New(data.PrefixAgent)
	n1 := &data.Number{ID: g.New(data.PrefixNumber), WorkspaceID: "ws_1", PhoneNumber: "+15550001", Provider: "sip", InboundAgentID: &agentA, OutboundAgentID: &agentA}
	n2 := &data.Number{ID: g.New(data.PrefixNumber), WorkspaceID: "ws_1", PhoneNumber: "+15550002", Provider: "sip", OutboundAgentID: &agentA}
	update(t, s, func(tx service.Tx) error {
		for _, n := range []*data.Number{n1, n2} {
			if ok, err := tx.InsertNumber(n); err != nil || !ok {
				t.Fatalf("insert %s: %v %v", n.PhoneNumber, ok, err)
			}
		}
		return nil
	})
	// The phone number is unique across workspaces: the second insert stores nothing.
	dup := &data.Number{ID: g.New(data.PrefixNumber), WorkspaceID: "ws_2", PhoneNumber: "+15550001", Provider: "sip"}
	update(t, s, func(tx service.Tx) error {
		ok, err := tx.InsertNumber(dup)
		if ok {
			t.Error("a phone number registered in another workspace was inserted again")
		}
		return err
	})
	checkNumbersListed(t, s, n1, n2, dup, agentA)
	checkNumberRebound(t, s, n1, n2, agentA, agentB)
	checkNumberDeleted(t, s, n1, dup, agentB)
	view(t, s, func(tx service.Tx) error {
		found, _, err := tx.AgentRef("ws_1", agentA)
		if found {
			t.Error("AgentRef found an agent nobody stored")
		}
		return err
	})
}

// checkNumbersListed reads n1 and n2 of ws_1 back (and not dup, refused): by id, newest
// first, by agent (n1, bound inbound and outbound to agentA, listed once), by page, and
// none in another workspace.
func checkNumbersListed(t *testing.T, s service.Store, n1, n2, dup *data.Number, agentA string) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		if got, _ := tx.Number(dup.ID); got != nil {
			t.Errorf("the refused number is stored: %+v", got)
		}
		got, err := tx.Number(n1.ID)
		if err != nil || got == nil || got.PhoneNumber != "+15550001" || *got.InboundAgentID != agentA {
			t.Fatalf("Number = %+v, %v", got, err)
		}
		if none, _ := tx.Number("num_01JD6ZZZZZZZZZZZZZZZZZZZZZ"); none != nil {
			t.Errorf("an absent number = %+v, want nil", none)
		}
		all, _, err := tx.Numbers("ws_1", service.NumberSearch{}, data.PageRequest{})
		if got := numberIDs(all); err != nil || len(got) != 2 || got[0] != n2.ID || got[1] != n1.ID {
			t.Errorf("the workspace's numbers = %v, %v; want newest first [%s %s]", got, err, n2.ID, n1.ID)
		}
		// Bound inbound and outbound to the same agent, n1 is listed once.
		byA, _, _ := tx.Numbers("ws_1", service.NumberSearch{NumberFilter: data.NumberFilter{AgentID: agentA}}, data.PageRequest{})
		if len(byA) != 2 {
			t.Errorf("agent A's numbers = %v, want both", numberIDs(byA))
		}
		if other, _, _ := tx.Numbers("ws_2", service.NumberSearch{}, data.PageRequest{}); len(other) != 0 {
			t.Errorf("another workspace lists %v", numberIDs(other))
		}
		first, page, err := tx.Numbers("ws_1", service.NumberSearch{}, data.PageRequest{PerPage: 1})
		if err != nil || len(first) != 1 || page.NextCursor == nil {
			t.Fatalf("first page of one: %v %+v %v", numberIDs(first), page, err)
		}
		second, _, err := tx.Numbers("ws_1", service.NumberSearch{}, data.PageRequest{PerPage: 1, Cursor: *page.NextCursor})
		if err != nil || len(second) != 1 || second[0].ID != n1.ID {
			t.Errorf("second page: %v %v", numberIDs(second), err)
		}
		return nil
	})
}

// checkNumberRebound rebinds n1 to agentB: rebinding moves the agent index.
func checkNumberRebound(t *testing.T, s service.Store, n1, n2 *data.Number, agentA, agentB string) {
	t.Helper()
	next := *n1
	next.InboundAgentID, next.OutboundAgentID, next.Nickname = nil, &agentB, "desk"
	update(t, s, func(tx service.Tx) error { return tx.PutNumber(&next) })
	view(t, s, func(tx service.Tx) error {
		byA, _, _ := tx.Numbers("ws_1", service.NumberSearch{NumberFilter: data.NumberFilter{AgentID: agentA}}, data.PageRequest{})
		byB, _, _ := tx.Numbers("ws_1", service.NumberSearch{NumberFilter: data.NumberFilter{AgentID: agentB}}, data.PageRequest{})
		if got := numberIDs(byA); len(got) != 1 || got[0] != n2.ID {
			t.Errorf("after rebinding, agent A's numbers = %v, want [%s]", got, n2.ID)
		}
		if got := numberIDs(byB); len(got) != 1 || got[0] != n1.ID || byB[0].Nickname != "desk" {
			t.Errorf("after rebinding, agent B's numbers = %v, want [%s]", got, n1.ID)
		}
		return nil
	})
}

// checkNumberDeleted deletes n1: a delete frees the phone number (dup, refused before,
// now inserts) and leaves no index entry behind.
func checkNumberDeleted(t *testing.T, s service.Store, n1, dup *data.Number, agentB string) {
	t.Helper()
	update(t, s, func(tx service.Tx) error { return tx.DeleteNumber(n1.ID) })
	view(t, s, func(tx service.Tx) error {
		if byB, _, _ := tx.Numbers("ws_1", service.NumberSearch{NumberFilter: data.NumberFilter{AgentID: agentB}}, data.PageRequest{}); len(byB) != 0 {
			t.Errorf("a deleted number is still listed under its agent: %v", numberIDs(byB))
		}
		if n, _ := tx.CountUpTo(data.LimitNumbers, "ws_1", -1); n != 1 {
			t.Errorf("numbers counted after a delete = %d, want 1", n)
		}
		return nil
	})
	update(t, s, func(tx service.Tx) error {
		ok, err := tx.InsertNumber(dup)
		if !ok {
			t.Error("a deleted number's phone number stays taken")
		}
		return err
	})
}

func testSubscriptions(t *testing.T, open Opener) {
	s := open(t)
	p := &data.SubscriptionPlan{Plan: "pro", Status: "active", Limits: map[string]int64{data.LimitNumbers: 3}, UpdatedAt: data.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))}
	update(t, s, func(tx service.Tx) error { return tx.PutSubscriptionPlan("ws_1", p) })
	view(t, s, func(tx service.Tx) error {
		got, err := tx.SubscriptionPlan("ws_1")
		if err != nil || got == nil || got.Plan != "pro" || got.Limits[data.LimitNumbers] != 3 || len(got.Limits) != 1 || !got.UpdatedAt.Equal(p.UpdatedAt.Time) {
			t.Errorf("stored plan = %+v, %v", got, err)
		}
		if other, _ := tx.SubscriptionPlan("ws_2"); other != nil {
			t.Errorf("another workspace's plan = %+v", other)
		}
		found, err := tx.WorkspaceExists("ws_01JD6ZZZZZZZZZZZZZZZZZZZZZ")
		if found {
			t.Error("a workspace nobody stored exists")
		}
		return err
	})
}

// testNumberSearch: the numbers list's search q reads the nickname (ignoring case) and the
// phone number's digits however they are written, narrows the agent filter, pages, and binds
// its cursor.
func testNumberSearch(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	agent := g.New(data.PrefixAgent)
	desk := &data.Number{ID: g.New(data.PrefixNumber), WorkspaceID: "ws_1", PhoneNumber: "+14155550123", Nickname: "Front Desk", Provider: "sip"}
	sales := &data.Number{ID: g.New(data.PrefixNumber), WorkspaceID: "ws_1", PhoneNumber: "+442079460000", Nickname: "Sales 415", Provider: "sip", InboundAgentID: &agent}
	other := &data.Number{ID: g.New(data.PrefixNumber), WorkspaceID: "ws_2", PhoneNumber: "+14155550999", Nickname: "Front desk", Provider: "sip"}
	update(t, s, func(tx service.Tx) error {
		for _, n := range []*data.Number{desk, sales, other} {
			if ok, err := tx.InsertNumber(n); err != nil || !ok {
				t.Fatalf("insert %s: %v %v", n.PhoneNumber, ok, err)
			}
		}
		return nil
	})
	view(t, s, func(tx service.Tx) error {
		for _, c := range []struct {
			f    data.NumberFilter
			want []string
		}{
			{data.NumberFilter{Q: "front"}, []string{desk.ID}},
			{data.NumberFilter{Q: "DESK"}, []string{desk.ID}},
			{data.NumberFilter{Q: "+1 (415) 555-01"}, []string{desk.ID}},
			{data.NumberFilter{Q: "415"}, []string{sales.ID, desk.ID}}, // a nickname and a number
			{data.NumberFilter{Q: "4420"}, []string{sales.ID}},
			{data.NumberFilter{Q: "415", AgentID: agent}, []string{sales.ID}},
			{data.NumberFilter{Q: "0999"}, []string{}},
			{data.NumberFilter{Q: "nobody"}, []string{}},
		} {
			got, page, err := tx.Numbers("ws_1", service.NumberSearch{NumberFilter: c.f}, data.PageRequest{PerPage: 10})
			if ids := numberIDs(got); err != nil || !slices.Equal(ids, c.want) || page.NextCursor != nil {
				t.Errorf("Numbers(%+v) = %v %+v %v; want %v", c.f, ids, page, err, c.want)
			}
		}
		first, page, err := tx.Numbers("ws_1", service.NumberSearch{NumberFilter: data.NumberFilter{Q: "415"}}, data.PageRequest{PerPage: 1})
		if ids := numberIDs(first); err != nil || !slices.Equal(ids, []string{sales.ID}) || page.NextCursor == nil {
			t.Fatalf("first page of a search: %v %+v %v", ids, page, err)
		}
		second, _, err := tx.Numbers("ws_1", service.NumberSearch{NumberFilter: data.NumberFilter{Q: "415"}}, data.PageRequest{PerPage: 1, Cursor: *page.NextCursor})
		if ids := numberIDs(second); err != nil || !slices.Equal(ids, []string{desk.ID}) {
			t.Errorf("second page of a search: %v %v", ids, err)
		}
		if _, _, err := tx.Numbers("ws_1", service.NumberSearch{NumberFilter: data.NumberFilter{Q: "41"}}, data.PageRequest{PerPage: 1, Cursor: *page.NextCursor}); data.ErrorCode(err) != data.EINVALID {
			t.Errorf("a cursor of another search: %v, want a 422 on cursor", err)
		}
		return nil
	})
}
