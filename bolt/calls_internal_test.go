package bolt

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// openInternal opens a database on a test clock, checked for consistency at the end.
func openInternal(t testing.TB, c *clock) *DB {
	t.Helper()
	db, err := Open(t.TempDir(), Options{PasswordCost: bcrypt.MinCost, NoSync: true, SecretKey: make([]byte, 32), Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := db.CheckConsistency()
		if err != nil {
			t.Errorf("consistency check: %v", err)
		}
		db.Close()
	})
	return db
}

// ownerCtx makes a user and returns a context acting as the owner of its workspace.
func ownerCtx(t testing.TB, db *DB, email string) (context.Context, string) {
	t.Helper()
	u, err := servicesFor(t, db).Users.CreateUser(context.Background(), data.UserCreate{Name: "T", Email: email, Password: "password123"})
	if err != nil {
		t.Fatal(err)
	}
	ws := u.PersonalWorkspaceID
	return data.WithPrincipal(context.Background(), &data.Principal{UserID: u.ID, WorkspaceID: ws, CurrentWorkspaceID: ws, Role: data.RoleOwner, Modules: data.Modules}), ws
}

// insertTestAgent stores a minimal agent row, as the agents store would.
func insertTestAgent(tx *bbolt.Tx, ws, id string, published *int) error {
	return putJSON(tx.Bucket(bucketAgents), []byte(id), map[string]any{"id": id, "workspace_id": ws, "published_version": published})
}

func newTestAgent(t testing.TB, db *DB, ws string) string {
	t.Helper()
	id := db.ids.New(data.PrefixAgent)
	if err := db.bolt.Update(func(tx *bbolt.Tx) error { return insertTestAgent(tx, ws, id, nil) }); err != nil {
		t.Fatal(err)
	}
	return id
}

// Deleting an agent unbinds its numbers (the agent service's rule) and tells each change.
func TestAgentDeleteUnbindsNumbers(t *testing.T) {
	db := openInternal(t, &clock{time.Now()})
	ctx, _ := ownerCtx(t, db, "a@example.com")
	mk := func(name string) string {
		ag, err := svcOf(db).Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some(name)})
		if err != nil {
			t.Fatal(err)
		}
		return ag.ID
	}
	a, b := mk("a"), mk("b")
	n1, err := svcOf(db).Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "+15550001", Provider: "sip", InboundAgentID: &a, OutboundAgentID: &b})
	if err != nil {
		t.Fatal(err)
	}
	n2, err := svcOf(db).Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "+15550002", Provider: "sip", InboundAgentID: &a, OutboundAgentID: &a})
	if err != nil {
		t.Fatal(err)
	}
	if err := svcOf(db).Agents.DeleteAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if updated, _, _ := svcOf(db).Audit.ListAuditLog(ctx, data.AuditFilter{Type: data.EventNumberUpdated}, data.PageRequest{}); len(updated) != 2 {
		t.Errorf("%d number.updated events, want one per unbound number", len(updated))
	}
	got1, _ := svcOf(db).Numbers.Number(ctx, n1.ID)
	got2, _ := svcOf(db).Numbers.Number(ctx, n2.ID)
	if got1.InboundAgentID != nil || got1.OutboundAgentID == nil || *got1.OutboundAgentID != b || got2.InboundAgentID != nil || got2.OutboundAgentID != nil {
		t.Fatalf("after the agent's delete: %+v %+v", got1, got2)
	}
	if list, _, _ := svcOf(db).Numbers.ListNumbers(ctx, data.NumberFilter{AgentID: a}, data.PageRequest{}); len(list) != 0 {
		t.Errorf("the deleted agent still lists %d numbers", len(list))
	}
	if list, _, _ := svcOf(db).Numbers.ListNumbers(ctx, data.NumberFilter{AgentID: b}, data.PageRequest{}); len(list) != 1 {
		t.Errorf("agent b lists %d numbers, want 1", len(list))
	}
}

func TestWorkspaceDeleteRemovesNumbersCallsAndRollups(t *testing.T) {
	c := &clock{time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	db := openInternal(t, c)
	ctx, personal := ownerCtx(t, db, "a@example.com")
	ws, err := servicesFor(t, db).Workspaces.CreateWorkspace(ctx, data.WorkspaceCreate{Name: "doomed"})
	if err != nil {
		t.Fatal(err)
	}
	wctx := data.WithPrincipal(context.Background(), &data.Principal{UserID: data.PrincipalFrom(ctx).UserID, WorkspaceID: ws.ID, CurrentWorkspaceID: ws.ID, Role: data.RoleOwner, Modules: data.Modules})
	agent := newTestAgent(t, db, ws.ID)
	n, err := svcOf(db).Numbers.CreateNumber(wctx, data.NumberCreate{PhoneNumber: "+15550003", Provider: "sip", InboundAgentID: &agent})
	if err != nil {
		t.Fatal(err)
	}
	d := int64(60_000)
	if _, err := svcOf(db).Calls.RegisterCall(wctx, data.CallCreate{AgentID: agent, NumberID: &n.ID, Direction: "web", Status: ptr("ended"), DurationMS: &d}); err != nil {
		t.Fatal(err)
	}
	if _, err := svcOf(db).Subscriptions.SetSubscription(context.Background(), ws.ID, data.SubscriptionSet{Limits: map[string]int64{data.LimitNumbers: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := servicesFor(t, db).Workspaces.DeleteWorkspace(wctx, ws.ID); err != nil {
		t.Fatal(err)
	}
	err = db.bolt.View(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketNumbers, bucketNumbersByPhone, bucketNumbersByWS, bucketNumbersByAgent, bucketCalls, bucketCallEntries, bucketCallScopes, bucketCallPostingDocs, bucketCallScopeCounts, bucketCallRollups, bucketCallMinutes, bucketSubscriptions} {
			if k, _ := tx.Bucket(name).Cursor().First(); k != nil {
				return fmt.Errorf("bucket %s keeps %q", name, k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The other workspace is untouched and the number is free again.
	if _, err := svcOf(db).Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "+15550003", Provider: "sip"}); err != nil {
		t.Fatalf("number not freed: %v (personal %s)", err, personal)
	}
}

func ptr[T any](v T) *T { return &v }

// TestAnalyticsExactAtHourEdges checks rollups plus edge scans against a direct count, for
// ranges that start and end inside hours, after updates and deletes.
func TestAnalyticsExactAtHourEdges(t *testing.T) {
	c := &clock{time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)}
	db := openInternal(t, c)
	ctx, ws := ownerCtx(t, db, "a@example.com")
	a, b := newTestAgent(t, db, ws), newTestAgent(t, db, ws)
	stored := changeSomeCalls(t, db, ctx, registerEdgeCalls(t, db, ctx, c, a, b))
	start := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	checkAnalyticsAgainstDirect(t, db, ctx, stored, start, a, b)
	full, _ := svcOf(db).Analytics.CallAnalytics(ctx, data.CallAnalyticsQuery{From: start, To: start.Add(24 * time.Hour), Interval: data.IntervalHour})
	reasons := map[string]int64{}
	for _, call := range stored {
		if call.DisconnectionReason != nil {
			reasons[*call.DisconnectionReason]++
		}
	}
	if fmt.Sprint(full.DisconnectionReasons) != fmt.Sprint(reasons) || len(full.Series) != 24 {
		t.Errorf("reasons %v, want %v; %d buckets", full.DisconnectionReasons, reasons, len(full.Series))
	}
	empty, _ := svcOf(db).Analytics.CallAnalytics(ctx, data.CallAnalyticsQuery{From: start.Add(-48 * time.Hour), To: start.Add(-47 * time.Hour), Interval: data.IntervalHour})
	raw, _ := json.Marshal(empty)
	if string(raw) != `{"totals":{"calls":0,"ended":0,"failed":0,"total_duration_ms":0,"average_duration_ms":0,"cost_micros":{}},"series":[{"start":"2026-11-18T08:00:00.000Z","calls":0,"ended":0,"failed":0,"total_duration_ms":0,"average_duration_ms":0,"cost_micros":{}}],"disconnection_reasons":{},"versions":[]}` {
		t.Errorf("empty range: %s", raw)
	}
}

// registerEdgeCalls registers 60 calls 7 minutes apart (so they straddle the hours), one
// in three of agent b, the others of a, in turn registered, ended, failed and ongoing.
func registerEdgeCalls(t *testing.T, db *DB, ctx context.Context, c *clock, a, b string) []*data.Call {
	t.Helper()
	var calls []*data.Call
	for i := range 60 {
		c.t = c.t.Add(7 * time.Minute)
		agent := a
		if i%3 == 0 {
			agent = b
		}
		in := data.CallCreate{AgentID: agent, Direction: "web"}
		switch i % 4 {
		case 1:
			in.Status, in.DurationMS, in.DisconnectionReason = ptr("ended"), ptr(int64(1000*i)), ptr("user_hangup")
		case 2:
			in.Status, in.DisconnectionReason = ptr("failed"), ptr("dial_failed")
		case 3:
			in.Status = ptr("ongoing")
		}
		call, err := svcOf(db).Calls.RegisterCall(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, call)
	}
	return calls
}

// changeSomeCalls moves some calls on and deletes others (rollups must follow), and
// returns the calls still stored, as stored.
func changeSomeCalls(t *testing.T, db *DB, ctx context.Context, calls []*data.Call) []*data.Call {
	t.Helper()
	for i, call := range calls {
		switch {
		case i%4 == 3 && i%2 == 1:
			if _, err := svcOf(db).Calls.UpdateCall(ctx, call.ID, data.CallUpdate{Status: data.Some("ended"), DurationMS: data.Some(int64(500)), DisconnectionReason: data.Some("agent_hangup")}); err != nil {
				t.Fatal(err)
			}
		case i%5 == 0:
			if err := svcOf(db).Calls.DeleteCall(ctx, call.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	var stored []*data.Call
	for _, call := range calls {
		if got, err := svcOf(db).Calls.Call(ctx, call.ID); err == nil {
			stored = append(stored, got)
		}
	}
	return stored
}

// directTotals adds up the stored calls created in [from, to) of agent ("" any).
func directTotals(stored []*data.Call, from, to time.Time, agent string) data.CallTotals {
	var r data.CallRollup
	for _, call := range stored {
		if !call.CreatedAt.Before(from) && call.CreatedAt.Before(to) && (agent == "" || call.AgentID == agent) {
			r.Add(data.RollupOf(call), 1)
		}
	}
	tot := data.CallTotals{Calls: r.Calls, Ended: r.Ended, Failed: r.Failed, TotalDurationMS: r.DurationMS, CostMicros: map[string]int64{}}
	if r.WithDuration > 0 {
		tot.AverageDurationMS = r.DurationMS / r.WithDuration
	}
	return tot
}

// checkAnalyticsAgainstDirect holds the analytics of ranges cutting hours anywhere, for
// any agent, a and b, by hour and by day, to the stored calls added up directly.
func checkAnalyticsAgainstDirect(t *testing.T, db *DB, ctx context.Context, stored []*data.Call, start time.Time, a, b string) {
	t.Helper()
	ranges := [][2]time.Time{
		{start, start.Add(8 * time.Hour)},
		{start.Add(37 * time.Minute), start.Add(5*time.Hour + 13*time.Minute)},
		{start.Add(61 * time.Minute), start.Add(62*time.Minute + 500*time.Microsecond)},
		{start.Add(2*time.Hour + 14*time.Minute), start.Add(3 * time.Hour)},
	}
	for _, rg := range ranges {
		for _, agent := range []string{"", a, b} {
			for _, interval := range []string{data.IntervalHour, data.IntervalDay} {
				got, err := svcOf(db).Analytics.CallAnalytics(ctx, data.CallAnalyticsQuery{From: rg[0], To: rg[1], AgentID: agent, Interval: interval})
				if err != nil {
					t.Fatal(err)
				}
				want := directTotals(stored, rg[0], rg[1], agent)
				if !reflect.DeepEqual(got.Totals, want) {
					t.Errorf("%v–%v agent %q %s: totals %+v, want %+v", rg[0].Format("15:04"), rg[1].Format("15:04"), agent, interval, got.Totals, want)
				}
				var sum int64
				for _, p := range got.Series {
					sum += p.Calls
				}
				if sum != want.Calls {
					t.Errorf("series sums to %d, want %d", sum, want.Calls)
				}
			}
		}
	}
}

func TestCallMinutesCountInTheMonthTheCallEnded(t *testing.T) {
	c := &clock{time.Date(2026, 10, 31, 23, 59, 0, 0, time.UTC)}
	db := openInternal(t, c)
	ctx, ws := ownerCtx(t, db, "a@example.com")
	agent := newTestAgent(t, db, ws)
	call, err := svcOf(db).Calls.RegisterCall(ctx, data.CallCreate{AgentID: agent, Direction: "web", Status: ptr("ongoing")})
	if err != nil {
		t.Fatal(err)
	}
	c.t = time.Date(2026, 11, 1, 0, 1, 0, 0, time.UTC)
	if _, err := svcOf(db).Calls.UpdateCall(ctx, call.ID, data.CallUpdate{Status: data.Some("ended")}); err != nil {
		t.Fatal(err)
	}
	s, _ := svcOf(db).Subscriptions.Subscription(ctx, ws)
	if s.Usage[data.LimitCallMinutes] != 2 || s.CurrentPeriodStart.Format(data.TimeLayout) != "2026-11-01T00:00:00.000Z" {
		t.Errorf("usage %d, period %v", s.Usage[data.LimitCallMinutes], s.CurrentPeriodStart)
	}
	c.t = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if s, _ := svcOf(db).Subscriptions.Subscription(ctx, ws); s.Usage[data.LimitCallMinutes] != 0 {
		t.Errorf("a new month starts at %d minutes", s.Usage[data.LimitCallMinutes])
	}
	if err := svcOf(db).Calls.DeleteCall(ctx, call.ID); err != nil {
		t.Fatal(err)
	}
	c.t = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	if s, _ := svcOf(db).Subscriptions.Subscription(ctx, ws); s.Usage[data.LimitCallMinutes] != 2 {
		t.Errorf("deleting a call refunded minutes: %d", s.Usage[data.LimitCallMinutes])
	}
}

func TestIDBoundOrdersLikeCreation(t *testing.T) {
	g := &data.IDGen{Now: func() time.Time { return time.UnixMilli(1_764_000_000_123) }, Rand: zeroRand{}}
	id := g.New(data.PrefixCall)
	at := time.UnixMilli(1_764_000_000_123)
	if !data.IDTime(data.PrefixCall, id).Equal(at) {
		t.Fatalf("idTime = %v, want %v", data.IDTime(data.PrefixCall, id), at)
	}
	if b := data.IDBound(data.PrefixCall, at); !(b <= id) {
		t.Errorf("bound %s sorts after an id of the same millisecond %s", b, id)
	}
	if b := data.IDBound(data.PrefixCall, at.Add(time.Microsecond)); !(b > id) {
		t.Errorf("bound of a later instant %s does not sort after %s", b, id)
	}
	if b := data.IDBound(data.PrefixCall, at.Add(-time.Millisecond)); !(b < id) {
		t.Errorf("bound of an earlier millisecond %s does not sort before %s", b, id)
	}
}

type zeroRand struct{}

func (zeroRand) Read(p []byte) (int, error) { clear(p); return len(p), nil }
