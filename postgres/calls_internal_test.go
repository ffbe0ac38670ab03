package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/service"
)

func openCallsTestDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), Options{URL: pgtest.Database(t), SecretKey: make([]byte, 32), PasswordCost: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// callModel is what the calls table should hold after random writes, kept in Go.
type callModel struct {
	calls   map[string]*data.Call
	minutes map[string]int64 // ws + month → ms
}

func randomCall(rng *rand.Rand, id, ws string, agents, numbers []string) *data.Call {
	at := data.NewTime(data.IDTime(data.PrefixCall, id))
	c := &data.Call{ID: id, WorkspaceID: ws, AgentID: agents[rng.IntN(len(agents))], CreatedAt: at, UpdatedAt: at}
	randomize(rng, c, numbers)
	return c
}

// randomize gives c random filterable attributes, status, duration and reason.
func randomize(rng *rand.Rand, c *data.Call, numbers []string) {
	c.Direction = []string{data.DirectionInbound, data.DirectionOutbound, data.DirectionWeb}[rng.IntN(3)]
	c.Status = []string{data.CallRegistered, data.CallOngoing, data.CallEnded, data.CallFailed}[rng.IntN(4)]
	c.NumberID = nil
	if i := rng.IntN(len(numbers) + 1); i < len(numbers) {
		c.NumberID = &numbers[i]
	}
	c.DurationMS, c.EndedAt, c.DisconnectionReason = nil, nil, nil
	if rng.IntN(3) > 0 {
		d := int64(rng.IntN(100_000))
		end := data.NewTime(c.CreatedAt.Add(time.Duration(d) * time.Millisecond))
		c.DurationMS, c.EndedAt = &d, &end
	}
	if rng.IntN(2) == 0 {
		r := []string{"user_hangup", "agent_hangup", "voicemail"}[rng.IntN(3)]
		c.DisconnectionReason = &r
	}
	c.Transcript = []data.TranscriptItem{{Role: "user", Content: "hi", StartMS: int64(rng.IntN(9))}}
	c.Variables = map[string]any{"n": float64(rng.IntN(9))}
	// Cost per currency and version: the rollups' cost maps must follow them too. They are
	// drawn from a generator of their own, seeded by the call and its draw above, so the
	// shared sequence (and the data of the tests built on randomCall) stays as it was.
	h := fnv.New64a()
	h.Write([]byte(c.ID))
	own := rand.New(rand.NewPCG(h.Sum64(), uint64(c.Variables["n"].(float64))))
	c.Cost, c.AgentVersion = nil, nil
	if own.IntN(3) > 0 {
		micros := int64(own.IntN(5000))
		c.Cost = &data.CallCost{Currency: []string{"USD", "EUR"}[own.IntN(2)], TotalMicros: micros, Total: data.Money(micros),
			Lines: []data.CostLine{}, Unpriced: []data.CostLine{}}
	}
	if v := own.IntN(4); v > 0 {
		c.AgentVersion = &v
	}
}

func (m *callModel) countMinutes(c *data.Call) {
	if c.DurationMS != nil && c.EndedAt != nil && *c.DurationMS != 0 {
		m.minutes[c.WorkspaceID+monthOf(c.EndedAt.Time)] += *c.DurationMS
	}
}

// Random inserts, updates and deletes keep the derived tables exact, and every list and
// rollup read answers what a brute-force reading of the calls answers, with a scan bound
// small enough that pages end early.
func TestCallsAgainstModel(t *testing.T) {
	db := openCallsTestDB(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2026, 11, 20, 7, 40, 0, 0, time.UTC)
	ids := &data.IDGen{Now: func() time.Time { at = at.Add(time.Duration(rng.IntN(90)) * time.Second); return at }, Rand: rand.NewChaCha8([32]byte{7})}
	agents := []string{"agt_A", "agt_B", "agt_C", "agt_D"}
	numbers := []string{"num_1", "num_2", "num_3"}
	m := &callModel{calls: map[string]*data.Call{}, minutes: map[string]int64{}}
	m.insertBatches(t, db, rng, ids, agents, numbers)
	m.churn(t, db, rng, agents, numbers)
	if n, err := DerivedMismatches(ctx, db); err != nil || n != 0 {
		t.Fatalf("%d rows of the scope counts and rollups differ from the calls (%v)", n, err)
	}
	defer SetMaxCallScan(7)()
	err := db.View(ctx, func(tx service.Tx) error {
		checkCallLists(t, tx, m, agents, numbers)
		checkCallRollups(t, tx, m)
		checkCallMinutes(t, tx, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// insertBatches inserts six batches of 50 random calls into db and the model.
func (m *callModel) insertBatches(t *testing.T, db *DB, rng *rand.Rand, ids *data.IDGen, agents, numbers []string) {
	t.Helper()
	ctx := context.Background()
	for batch := 0; batch < 6; batch++ {
		err := db.Update(ctx, func(tx service.Tx) error {
			for range 50 {
				c := randomCall(rng, ids.New(data.PrefixCall), []string{"ws_1", "ws_1", "ws_2"}[rng.IntN(3)], agents, numbers)
				if err := tx.InsertCall(c); err != nil {
					return err
				}
				m.calls[c.ID] = c
				if data.CallFinal(c.Status) {
					m.countMinutes(c)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// churn changes 120 random calls (an agent moved now and then) and deletes 60, in db and
// the model.
func (m *callModel) churn(t *testing.T, db *DB, rng *rand.Rand, agents, numbers []string) {
	t.Helper()
	ctx := context.Background()
	all := make([]string, 0, len(m.calls))
	for id := range m.calls {
		all = append(all, id)
	}
	sort.Strings(all)
	err := db.Update(ctx, func(tx service.Tx) error {
		for range 120 {
			old := m.calls[all[rng.IntN(len(all))]]
			if old == nil {
				continue
			}
			next := *old
			randomize(rng, &next, numbers)
			if rng.IntN(4) == 0 {
				next.AgentID = agents[rng.IntN(len(agents))]
			}
			if err := tx.PutCall(&next); err != nil {
				return err
			}
			if !data.CallFinal(old.Status) && data.CallFinal(next.Status) {
				m.countMinutes(&next)
			}
			m.calls[next.ID] = &next
		}
		for range 60 {
			id := all[rng.IntN(len(all))]
			if err := tx.DeleteCall(id, nil); err != nil {
				return err
			}
			delete(m.calls, id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkCallMinutes checks the ended calls' minutes of each workspace and month.
func checkCallMinutes(t *testing.T, tx service.Tx, m *callModel) {
	t.Helper()
	for key, want := range m.minutes {
		ws, month := key[:4], key[4:]
		day, _ := time.Parse("2006-01-02", month)
		if got, err := tx.EndedCallMillisInMonth(ws, day.Add(40*time.Hour)); err != nil || got != want {
			t.Errorf("minutes of %s in %s = %d, %v; want %d", ws, month, got, err, want)
		}
	}
}

func checkCallLists(t *testing.T, tx service.Tx, m *callModel, agents, numbers []string) {
	t.Helper()
	first := data.IDTime(data.PrefixCall, minID(m))
	filters := []data.CallFilter{
		{}, {AgentID: "agt_B"}, {NumberID: "num_2"}, {Direction: data.DirectionWeb}, {Status: data.CallFailed},
		{AgentID: "agt_A", Status: data.CallEnded}, {NumberID: "num_1", Direction: data.DirectionInbound, Status: data.CallOngoing},
		{From: first.Add(40 * time.Minute), To: first.Add(3 * time.Hour)}, {AgentID: "agt_C", From: first.Add(time.Hour)},
		{AgentID: "agt_Z"},
	}
	restrictions := [][]string{nil, {}, {"agt_A"}, {"agt_B", "agt_D"}}
	for _, f := range filters {
		for _, r := range restrictions {
			for _, ws := range []string{"ws_1", "ws_2"} {
				want := modelList(m, ws, r, f)
				name := fmt.Sprintf("%s %v %+v", ws, r, f)
				got := walkCalls(t, tx, ws, r, f, name)
				if !slices.Equal(got, want) {
					t.Errorf("%s: listed %v, want %v", name, got, want)
				}
			}
		}
	}
}

// walkCalls walks every page of a list forward, then back from its last page, and
// returns the ids listed forward.
func walkCalls(t *testing.T, tx service.Tx, ws string, agents []string, f data.CallFilter, name string) []string {
	t.Helper()
	var out []string
	req := data.PageRequest{PerPage: 3}
	var prev *string
	lastLen := 0
	for range 500 {
		list, page, err := tx.Calls(ws, agents, f, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, c := range list {
			out = append(out, c.ID)
		}
		prev, lastLen = page.PrevCursor, len(list)
		if page.NextCursor == nil {
			break
		}
		req.Cursor = *page.NextCursor
	}
	// Back from the last page, each page read through prev_cursor: the same calls.
	var back []string
	for range 500 {
		if prev == nil {
			break
		}
		list, page, err := tx.Calls(ws, agents, f, data.PageRequest{PerPage: 3, Cursor: *prev})
		if err != nil {
			t.Fatalf("%s back: %v", name, err)
		}
		for i := len(list) - 1; i >= 0; i-- {
			back = append(back, list[i].ID)
		}
		prev = page.PrevCursor
	}
	// The backward walk lists everything newer than the last page: than its first call,
	// or, when it is empty, than its cursor, which may be the last call listed (a walk
	// cut at the scan bound on a match resumes from it).
	want := out[:len(out)-lastLen]
	if lastLen == 0 && len(back) == len(out)-1 {
		want = out[:len(out)-1]
	}
	if !slices.Equal(reversed(back), want) {
		t.Errorf("%s: back %v, forward %v", name, reversed(back), out)
	}
	return out
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func minID(m *callModel) string {
	min := ""
	for id := range m.calls {
		if min == "" || id < min {
			min = id
		}
	}
	return min
}

func modelList(m *callModel, ws string, agents []string, f data.CallFilter) []string {
	var out []string
	for id, c := range m.calls {
		ok := c.WorkspaceID == ws && (agents == nil || slices.Contains(agents, c.AgentID)) &&
			(f.AgentID == "" || c.AgentID == f.AgentID) && (f.Direction == "" || c.Direction == f.Direction) &&
			(f.Status == "" || c.Status == f.Status) && (f.NumberID == "" || c.NumberID != nil && *c.NumberID == f.NumberID) &&
			(f.From.IsZero() || !c.CreatedAt.Before(f.From)) && (f.To.IsZero() || c.CreatedAt.Before(f.To))
		if ok {
			out = append(out, id)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out
}

func checkCallRollups(t *testing.T, tx service.Tx, m *callModel) {
	t.Helper()
	first := data.IDTime(data.PrefixCall, minID(m))
	for _, tc := range []struct {
		agent    string
		from, to time.Time
		step     time.Duration
	}{
		{"", first.Add(-time.Hour), first.Add(30 * time.Hour), time.Hour},
		{"", first.Add(17 * time.Minute), first.Add(5*time.Hour + 3*time.Minute), time.Hour},
		{"agt_B", first.Add(17 * time.Minute), first.Add(5*time.Hour + 3*time.Minute), time.Hour},
		{"", first.Add(-3 * time.Minute), first.Add(26 * time.Hour), 24 * time.Hour},
		{"agt_A", first.Add(10 * time.Minute), first.Add(20 * time.Minute), time.Hour},
	} {
		for _, ws := range []string{"ws_1", "ws_2"} {
			got, err := tx.CallRollups(ws, tc.agent, tc.from, tc.to, tc.step)
			if err != nil {
				t.Fatal(err)
			}
			if want := modelRollups(m, ws, tc.agent, tc.from, tc.to, tc.step); !reflect.DeepEqual(got, want) {
				t.Errorf("rollups of %s %q %v..%v by %v:\n got %+v\nwant %+v", ws, tc.agent, tc.from, tc.to, tc.step, got, want)
			}
		}
	}
}

func modelRollups(m *callModel, ws, agent string, from, to time.Time, step time.Duration) []data.CallBucket {
	first := from.Truncate(step)
	sums := map[int]*data.CallRollup{}
	for _, c := range m.calls {
		if c.WorkspaceID != ws || agent != "" && c.AgentID != agent || c.CreatedAt.Before(from) || !c.CreatedAt.Before(to) {
			continue
		}
		i := int(c.CreatedAt.Sub(first) / step)
		if sums[i] == nil {
			sums[i] = &data.CallRollup{}
		}
		r := data.RollupOf(c)
		if agent == "" {
			r = r.WithoutVersions() // per-version counts are an agent's only
		}
		sums[i].Add(r, 1)
	}
	out := []data.CallBucket{}
	for i := 0; i <= int(to.Sub(first)/step); i++ {
		if r := sums[i]; r != nil {
			out = append(out, data.CallBucket{Start: first.Add(time.Duration(i) * step), Calls: r.Calls, Ended: r.Ended,
				Failed: r.Failed, DurationMS: r.DurationMS, WithDuration: r.WithDuration, Reasons: r.Reasons,
				Cost: r.Cost, VersionCost: r.VersionCost, Versions: r.Versions})
		}
	}
	return out
}
