package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func callIDs(list []*data.Call) []string {
	out := make([]string, len(list))
	for i, c := range list {
		out[i] = c.ID
	}
	return out
}

// newCall is a call made now by g, created at the time its id carries.
func newCall(g *data.IDGen, ws, agent, direction, status string) *data.Call {
	id := g.New(data.PrefixCall)
	at := data.NewTime(data.IDTime(data.PrefixCall, id))
	return &data.Call{ID: id, WorkspaceID: ws, AgentID: agent, Direction: direction, Status: status,
		Transcript: []data.TranscriptItem{}, Variables: map[string]any{}, Metadata: map[string]any{}, CreatedAt: at, UpdatedAt: at}
}

// listAll walks every page of a list, newest first.
func listAll(t *testing.T, tx service.Tx, ws string, agents []string, f data.CallFilter) []string {
	t.Helper()
	var out []string
	req := data.PageRequest{PerPage: 2}
	for range 20 {
		list, page, err := tx.Calls(ws, agents, f, req)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, callIDs(list)...)
		if page.NextCursor == nil {
			return out
		}
		req.Cursor = *page.NextCursor
	}
	t.Fatal("the pages do not end")
	return nil
}

func testCalls(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	a, b := g.New(data.PrefixAgent), g.New(data.PrefixAgent)
	num := g.New(data.PrefixNumber)
	c1 := newCall(g, "ws_1", a, data.DirectionInbound, data.CallRegistered)
	c1.NumberID = &num
	c2 := newCall(g, "ws_1", b, data.DirectionWeb, data.CallOngoing)
	c3 := newCall(g, "ws_1", a, data.DirectionWeb, data.CallEnded)
	d := int64(90_000)
	reason := "user_hangup"
	c3.DurationMS, c3.EndedAt, c3.DisconnectionReason = &d, &c3.CreatedAt, &reason
	other := newCall(g, "ws_2", a, data.DirectionWeb, data.CallRegistered)
	update(t, s, func(tx service.Tx) error {
		for _, c := range []*data.Call{c1, c2, c3, other} {
			if err := tx.InsertCall(c); err != nil {
				return err
			}
		}
		return nil
	})
	f := &storedCalls{a: a, b: b, num: num, c1: c1, c2: c2, c3: c3, d: d}
	f.checkListed(t, s)
	d2 := f.checkUpdateMovesIndexes(t, s)
	f.checkDeleteKeepsMinutes(t, s, d2)
}

// storedCalls are testCalls's calls in ws_1: c1 inbound on agent a and number num, c2
// ongoing on agent b, c3 ended on agent a after d milliseconds.
type storedCalls struct {
	a, b, num  string
	c1, c2, c3 *data.Call
	d          int64
}

// checkListed checks a call reads back and every filter lists its calls newest first.
func (f *storedCalls) checkListed(t *testing.T, s service.Store) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		if got, err := tx.Call(f.c3.ID); err != nil || got == nil || *got.DurationMS != f.d || got.Status != data.CallEnded {
			t.Errorf("Call = %+v, %v", got, err)
		}
		if none, _ := tx.Call("call_01JD6ZZZZZZZZZZZZZZZZZZZZZ"); none != nil {
			t.Errorf("an absent call = %+v", none)
		}
		for _, tc := range []struct {
			name   string
			agents []string
			f      data.CallFilter
			want   []string
		}{
			{"all", nil, data.CallFilter{}, []string{f.c3.ID, f.c2.ID, f.c1.ID}},
			{"agent", nil, data.CallFilter{AgentID: f.a}, []string{f.c3.ID, f.c1.ID}},
			{"number", nil, data.CallFilter{NumberID: f.num}, []string{f.c1.ID}},
			{"direction and status", nil, data.CallFilter{Direction: data.DirectionWeb, Status: data.CallOngoing}, []string{f.c2.ID}},
			{"from", nil, data.CallFilter{From: f.c2.CreatedAt.Time}, []string{f.c3.ID, f.c2.ID}},
			{"to", nil, data.CallFilter{To: f.c2.CreatedAt.Time}, []string{f.c1.ID}},
			{"restricted", []string{f.b}, data.CallFilter{}, []string{f.c2.ID}},
			{"restricted to none", []string{}, data.CallFilter{}, nil},
			{"agent outside the restriction", []string{f.b}, data.CallFilter{AgentID: f.a}, nil},
		} {
			if got := listAll(t, tx, "ws_1", tc.agents, tc.f); !slices.Equal(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
		if ms, _ := tx.EndedCallMillisInMonth("ws_1", f.c3.CreatedAt.Time); ms != f.d {
			t.Errorf("ended call millis = %d, want %d", ms, f.d)
		}
		return nil
	})
}

// checkUpdateMovesIndexes ends c2: the update moves the indexes and counts the minutes
// of a call that ends. It returns c2's duration.
func (f *storedCalls) checkUpdateMovesIndexes(t *testing.T, s service.Store) int64 {
	t.Helper()
	next := *f.c2
	d2 := int64(30_000)
	next.Status, next.DurationMS, next.EndedAt = data.CallEnded, &d2, &f.c2.CreatedAt
	update(t, s, func(tx service.Tx) error { return tx.PutCall(&next) })
	view(t, s, func(tx service.Tx) error {
		if got := listAll(t, tx, "ws_1", nil, data.CallFilter{Status: data.CallOngoing}); len(got) != 0 {
			t.Errorf("ongoing after the update: %v", got)
		}
		if got := listAll(t, tx, "ws_1", nil, data.CallFilter{Status: data.CallEnded}); !slices.Equal(got, []string{f.c3.ID, f.c2.ID}) {
			t.Errorf("ended after the update: %v", got)
		}
		if ms, _ := tx.EndedCallMillisInMonth("ws_1", f.c3.CreatedAt.Time); ms != f.d+d2 {
			t.Errorf("ended call millis = %d, want %d", ms, f.d+d2)
		}
		return nil
	})
	return d2
}

// checkDeleteKeepsMinutes deletes c3: it leaves the lists, and the minutes it used stay
// counted.
func (f *storedCalls) checkDeleteKeepsMinutes(t *testing.T, s service.Store, d2 int64) {
	t.Helper()
	update(t, s, func(tx service.Tx) error { return tx.DeleteCall(f.c3.ID, nil) })
	view(t, s, func(tx service.Tx) error {
		if got := listAll(t, tx, "ws_1", nil, data.CallFilter{AgentID: f.a}); !slices.Equal(got, []string{f.c1.ID}) {
			t.Errorf("agent a after the delete: %v", got)
		}
		if got, _ := tx.Call(f.c3.ID); got != nil {
			t.Error("a deleted call is stored")
		}
		if ms, _ := tx.EndedCallMillisInMonth("ws_1", f.c3.CreatedAt.Time); ms != f.d+d2 {
			t.Errorf("ended call millis after a delete = %d, want %d", ms, f.d+d2)
		}
		return nil
	})
}

func testCallRollups(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	a, b := g.New(data.PrefixAgent), g.New(data.PrefixAgent)
	// Calls at 08:00:00.00x (from stepIDs()), then at 09:30 and 10:15 on the same day.
	var calls []*data.Call
	reason := "agent_hangup"
	for i, at := range []time.Duration{0, 90 * time.Minute, 135 * time.Minute} {
		g.Now = func() time.Time {
			return time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC).Add(at + time.Duration(i)*time.Millisecond)
		}
		agent := a
		if i == 2 {
			agent = b
		}
		c := newCall(g, "ws_1", agent, data.DirectionWeb, data.CallEnded)
		d := int64(1000 * (i + 1))
		c.DurationMS, c.EndedAt, c.DisconnectionReason = &d, &c.CreatedAt, &reason
		calls = append(calls, c)
	}
	calls[2].Status, calls[2].DisconnectionReason = data.CallFailed, nil
	update(t, s, func(tx service.Tx) error {
		for _, c := range calls {
			if err := tx.InsertCall(c); err != nil {
				return err
			}
		}
		return nil
	})
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	view(t, s, func(tx service.Tx) error {
		// By hour over an unaligned range that cuts the 10:00 hour: 08:00, 09:00 and 10:00.
		hours, err := tx.CallRollups("ws_1", "", day.Add(8*time.Hour), day.Add(10*time.Hour+20*time.Minute), time.Hour)
		if err != nil {
			return err
		}
		if len(hours) != 3 || !hours[0].Start.Equal(day.Add(8*time.Hour)) || !hours[2].Start.Equal(day.Add(10*time.Hour)) {
			t.Fatalf("hour buckets = %+v", hours)
		}
		if h := hours[0]; h.Calls != 1 || h.Ended != 1 || h.DurationMS != 1000 || h.WithDuration != 1 || h.Reasons[reason] != 1 {
			t.Errorf("08:00 = %+v", h)
		}
		if h := hours[2]; h.Calls != 1 || h.Failed != 1 || h.Ended != 0 || len(h.Reasons) != 0 {
			t.Errorf("10:00 = %+v", h)
		}
		// A range ending before 10:15 leaves the last call out.
		early, _ := tx.CallRollups("ws_1", "", day.Add(8*time.Hour), day.Add(10*time.Hour+10*time.Minute), time.Hour)
		if len(early) != 2 {
			t.Errorf("buckets before 10:15 = %+v", early)
		}
		// By day, for one agent.
		days, _ := tx.CallRollups("ws_1", a, day, day.Add(48*time.Hour), 24*time.Hour)
		if len(days) != 1 || !days[0].Start.Equal(day) || days[0].Calls != 2 || days[0].DurationMS != 3000 || days[0].Reasons[reason] != 2 {
			t.Errorf("agent a by day = %+v", days)
		}
		if empty, err := tx.CallRollups("ws_1", "", day.Add(9*time.Hour), day.Add(9*time.Hour), time.Hour); err != nil || len(empty) != 0 {
			t.Errorf("an empty range = %+v, %v", empty, err)
		}
		if other, _ := tx.CallRollups("ws_2", "", day, day.Add(24*time.Hour), time.Hour); len(other) != 0 {
			t.Errorf("another workspace's buckets = %+v", other)
		}
		return nil
	})
	// A delete takes the call out of its hour.
	update(t, s, func(tx service.Tx) error { return tx.DeleteCall(calls[0].ID, nil) })
	view(t, s, func(tx service.Tx) error {
		days, err := tx.CallRollups("ws_1", "", day, day.Add(24*time.Hour), 24*time.Hour)
		if len(days) != 1 || days[0].Calls != 2 || days[0].Reasons[reason] != 1 {
			t.Errorf("after a delete = %+v", days)
		}
		return err
	})
}
