package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"campaigns", testCampaigns}, suite{"suppressions", testSuppressions},
		suite{"campaigns_workspace_delete", testCampaignsWorkspaceDelete}, suite{"campaigns_draining", testCampaignsDraining})
}

// campaignFixture is a campaign of ws with three pending recipients due at t0, t0+1m, t0+2m.
func campaignFixture(g *data.IDGen, ws string, t0 time.Time) (*data.Campaign, []*data.Recipient) {
	c := &data.Campaign{ID: g.New(data.PrefixCampaign), WorkspaceID: ws, Name: "C", AgentID: "agt_1", Status: data.CampaignRunning,
		Window: data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"}, MaxConcurrent: 2}
	var rs []*data.Recipient
	for i := range 3 {
		at := data.NewTime(t0.Add(time.Duration(i) * time.Minute))
		rs = append(rs, &data.Recipient{ID: g.New(data.PrefixRecipient), CampaignID: c.ID, WorkspaceID: ws,
			PhoneNumber: "+1415555010" + string(rune('0'+i)), State: data.RecipientPending, NextAt: &at,
			Variables: map[string]any{"i": float64(i)}, Attempts: []data.RecipientAttempt{}})
	}
	c.Counts.Total, c.Counts.Pending = 3, 3
	return c, rs
}

func recipientIDs(list []*data.Recipient) []string {
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.ID
	}
	return out
}

// testCampaigns: the records round-trip (LastClaimAt too); the due index answers by
// next_at up to now inclusive; a lease moves a recipient to the lease index and the call
// index, and its end moves it out; final campaigns leave the open list.
func testCampaigns(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	c, rs := campaignFixture(g, "ws_1", t0)
	update(t, s, func(tx service.Tx) error { return tx.InsertCampaign(c, rs) })
	checkCampaignInserted(t, s, c, rs, t0)
	leased := leaseFirstRecipient(t, s, c, rs, t0)
	endLeasedAttempt(t, s, c, rs, leased, t0)
}

// checkCampaignInserted checks the campaign of rs as inserted at t0: its counts, the
// recipients due (next_at at now is due), the next due time, the open campaigns.
func checkCampaignInserted(t *testing.T, s service.Store, c *data.Campaign, rs []*data.Recipient, t0 time.Time) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		got, err := tx.Campaign(c.ID)
		if err != nil || got == nil || got.Counts.Pending != 3 || got.Name != "C" || got.LastClaimAt != nil {
			t.Fatalf("campaign: %+v %v", got, err)
		}
		due, err := tx.DueRecipients(c.ID, t0.Add(time.Minute), 10)
		if err != nil || !slices.Equal(recipientIDs(due), []string{rs[0].ID, rs[1].ID}) {
			t.Fatalf("due at t0+1m: %v %v, want the first two (next_at at now is due)", recipientIDs(due), err)
		}
		if limited, _ := tx.DueRecipients(c.ID, t0.Add(time.Hour), 1); len(limited) != 1 {
			t.Errorf("the limit: %d", len(limited))
		}
		if next, _ := tx.NextDue(c.ID); !next.Equal(t0) {
			t.Errorf("next due %v, want %v", next, t0)
		}
		if open, _ := tx.OpenCampaigns("ws_1"); len(open) != 1 {
			t.Errorf("open campaigns: %d", len(open))
		}
		if other, _ := tx.OpenCampaigns("ws_2"); len(other) != 0 {
			t.Errorf("another workspace's open campaigns: %d", len(other))
		}
		return err
	})
}

// leaseFirstRecipient leases the first recipient: out of the due index, into the lease
// and call indexes; the campaign keeps the claim. It returns the leased recipient.
func leaseFirstRecipient(t *testing.T, s service.Store, c *data.Campaign, rs []*data.Recipient, t0 time.Time) data.Recipient {
	t.Helper()
	leased := *rs[0]
	until, call := data.NewTime(t0.Add(time.Minute)), "call_1"
	leased.State, leased.NextAt, leased.LeaseUntil, leased.CallID = data.RecipientInProgress, nil, &until, &call
	at := data.NewTime(t0)
	c.LastClaimAt, c.Counts.Pending, c.Counts.InProgress = &at, 2, 1
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutRecipient(rs[0], &leased); err != nil {
			return err
		}
		return tx.PutCampaign(c)
	})
	view(t, s, func(tx service.Tx) error {
		if due, _ := tx.DueRecipients(c.ID, t0.Add(time.Hour), 10); slices.Contains(recipientIDs(due), rs[0].ID) {
			t.Error("a leased recipient is still due")
		}
		if exp, _ := tx.ExpiredLeases(c.ID, t0.Add(time.Minute), 10); len(exp) != 0 {
			t.Error("a lease ending at now has expired: leases end after lease_until")
		}
		exp, err := tx.ExpiredLeases(c.ID, t0.Add(time.Minute+time.Millisecond), 10)
		if err != nil || len(exp) != 1 || exp[0].ID != rs[0].ID {
			t.Fatalf("expired leases: %v %v", recipientIDs(exp), err)
		}
		byCall, _ := tx.RecipientByCall("call_1")
		if byCall == nil || byCall.ID != rs[0].ID || byCall.State != data.RecipientInProgress {
			t.Fatalf("by call: %+v", byCall)
		}
		got, _ := tx.Campaign(c.ID)
		if got.LastClaimAt == nil || !got.LastClaimAt.Equal(t0) || got.Counts.InProgress != 1 {
			t.Errorf("the campaign after the claim: %+v", got)
		}
		return err
	})
	return leased
}

// endLeasedAttempt ends the leased recipient's call: completed, out of every index; the
// campaign, canceled, is no longer open.
func endLeasedAttempt(t *testing.T, s service.Store, c *data.Campaign, rs []*data.Recipient, leased data.Recipient, t0 time.Time) {
	t.Helper()
	call := *leased.CallID
	done := leased
	outcome := data.OutcomeAnswered
	done.State, done.LeaseUntil, done.CallID, done.Outcome = data.RecipientCompleted, nil, nil, &outcome
	done.Attempts = []data.RecipientAttempt{{Attempt: 1, CallID: &call, Outcome: &outcome}}
	c.Status, c.Counts.InProgress = data.CampaignCanceled, 0
	c.Counts.Add(data.RecipientCompleted, outcome, 1)
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutRecipient(&leased, &done); err != nil {
			return err
		}
		return tx.PutCampaign(c)
	})
	view(t, s, func(tx service.Tx) error {
		if r, _ := tx.RecipientByCall("call_1"); r != nil {
			t.Error("an ended attempt is still found by its call")
		}
		if exp, _ := tx.ExpiredLeases(c.ID, t0.Add(time.Hour), 10); len(exp) != 0 {
			t.Error("an ended attempt is still leased")
		}
		r, err := tx.Recipient(rs[0].ID)
		if err != nil || r.State != data.RecipientCompleted || len(r.Attempts) != 1 || *r.Attempts[0].Outcome != outcome {
			t.Fatalf("the recipient: %+v %v", r, err)
		}
		if open, _ := tx.OpenCampaigns("ws_1"); len(open) != 0 {
			t.Error("a canceled campaign is still open")
		}
		list, _, err := tx.Recipients(c.ID, service.StateSelection{}, data.PageRequest{PerPage: 2})
		if err != nil || len(list) != 2 || list[0].ID != rs[2].ID {
			t.Fatalf("recipients page: %v %v, want newest first", recipientIDs(list), err)
		}
		cs, _, err := tx.Campaigns("ws_1", data.CampaignFilter{Status: data.CampaignCanceled}, nil, data.PageRequest{})
		if err != nil || len(cs) != 1 {
			t.Fatalf("campaigns by status: %d %v", len(cs), err)
		}
		if none, _, _ := tx.Campaigns("ws_1", data.CampaignFilter{}, []string{"agt_2"}, data.PageRequest{}); len(none) != 0 {
			t.Error("a caller limited to another agent sees the campaign")
		}
		return err
	})
}

// testSuppressions: one entry per number and workspace; SuppressedAmong and the count
// answer for the workspace only; a deleted entry frees its number and leaves the count.
func testSuppressions(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	entry := func(ws, phone string) *data.Suppression {
		return &data.Suppression{ID: g.New(data.PrefixSuppression), WorkspaceID: ws, PhoneNumber: phone, CreatedAt: data.NewTime(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC))}
	}
	a, dup, other := entry("ws_1", "+14155550101"), entry("ws_1", "+14155550101"), entry("ws_2", "+14155550101")
	update(t, s, func(tx service.Tx) error {
		added, err := tx.InsertSuppressions([]*data.Suppression{a, dup, other})
		if !slices.Equal(added, []bool{true, false, true}) {
			t.Errorf("added %v, want the duplicate left out", added)
		}
		return err
	})
	view(t, s, func(tx service.Tx) error {
		among, err := tx.SuppressedAmong("ws_1", []string{"+14155550101", "+14155550102"})
		if !among["+14155550101"] || among["+14155550102"] || len(among) != 1 {
			t.Errorf("among: %v", among)
		}
		if e, _ := tx.SuppressionByPhone("ws_1", "+14155550101"); e == nil || e.ID != a.ID {
			t.Errorf("by phone: %+v", e)
		}
		list, _, _ := tx.Suppressions("ws_1", data.PageRequest{})
		if len(list) != 1 {
			t.Errorf("list: %d", len(list))
		}
		countSuppressions(t, tx, "ws_1", 1)
		countSuppressions(t, tx, "ws_3", 0)
		return err
	})
	update(t, s, func(tx service.Tx) error {
		countSuppressions(t, tx, "ws_2", 1) // a write counts too, the bound's check
		_, err := tx.InsertSuppressions([]*data.Suppression{entry("ws_2", "+14155550102"), entry("ws_2", "+14155550103")})
		countSuppressions(t, tx, "ws_2", 3)
		return err
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteSuppression(a) })
	update(t, s, func(tx service.Tx) error { return tx.DeleteSuppression(a) }) // gone already: the count stays
	view(t, s, func(tx service.Tx) error {
		if e, _ := tx.Suppression(a.ID); e != nil {
			t.Error("deleted entry still there")
		}
		among, err := tx.SuppressedAmong("ws_1", []string{"+14155550101"})
		if len(among) != 0 {
			t.Error("a deleted number is still suppressed")
		}
		if e, _ := tx.SuppressionByPhone("ws_2", "+14155550101"); e == nil {
			t.Error("the other workspace's entry went too")
		}
		countSuppressions(t, tx, "ws_1", 0)
		countSuppressions(t, tx, "ws_2", 3)
		return err
	})
}

// countSuppressions fails the test unless the workspace's list holds want numbers.
func countSuppressions(t *testing.T, tx service.Tx, ws string, want int) {
	t.Helper()
	if n, err := tx.CountSuppressions(ws); err != nil || n != want {
		t.Errorf("CountSuppressions(%s) = %d, %v; want %d", ws, n, err, want)
	}
}

// testCampaignsWorkspaceDelete: a deleted workspace's campaigns, recipients and list go;
// another's stay.
func testCampaignsWorkspaceDelete(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	gone, kept := wsIDs[0], wsIDs[1]
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	cg, rg := campaignFixture(g, gone, t0)
	ck, rk := campaignFixture(g, kept, t0)
	update(t, s, func(tx service.Tx) error {
		for _, ws := range []string{gone, kept} {
			if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: ws, Name: "W"}}); err != nil {
				return err
			}
			if _, err := tx.InsertSuppressions([]*data.Suppression{{ID: g.New(data.PrefixSuppression), WorkspaceID: ws, PhoneNumber: "+14155550199", CreatedAt: data.NewTime(t0)}}); err != nil {
				return err
			}
		}
		if err := tx.InsertCampaign(cg, rg); err != nil {
			return err
		}
		return tx.InsertCampaign(ck, rk)
	})
	// A campaign deleted with recipients left for its job goes with the workspace too.
	deleted, rd := campaignFixture(g, gone, t0)
	update(t, s, func(tx service.Tx) error {
		if err := tx.InsertCampaign(deleted, rd); err != nil {
			return err
		}
		if err := tx.DeleteCampaign(deleted); err != nil {
			return err
		}
		_, err := tx.DeleteCampaignRecipients(deleted.ID, 1)
		return err
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace(gone) })
	view(t, s, func(tx service.Tx) error {
		for _, r := range rd {
			if got, _ := tx.Recipient(r.ID); got != nil {
				t.Errorf("recipient %s of a campaign deleted before its workspace is left", r.ID)
			}
		}
		if due, _ := tx.DueRecipients(deleted.ID, t0.Add(time.Hour), 10); len(due) != 0 {
			t.Errorf("%d recipients of a campaign deleted before its workspace still due", len(due))
		}
		return nil
	})
	view(t, s, func(tx service.Tx) error {
		c, err := tx.Campaign(cg.ID)
		r, _ := tx.Recipient(rg[0].ID)
		due, _ := tx.DueRecipients(cg.ID, t0.Add(time.Hour), 10)
		sup, _ := tx.SuppressedAmong(gone, []string{"+14155550199"})
		countSuppressions(t, tx, gone, 0)
		if c != nil || r != nil || len(due) != 0 || len(sup) != 0 {
			t.Errorf("after the delete: campaign %v, recipient %v, due %d, suppressed %v", c != nil, r != nil, len(due), sup)
		}
		k, _ := tx.Campaign(ck.ID)
		kr, _ := tx.DueRecipients(ck.ID, t0.Add(time.Hour), 10)
		ks, _ := tx.SuppressedAmong(kept, []string{"+14155550199"})
		if k == nil || len(kr) != 3 || len(ks) != 1 {
			t.Errorf("the other workspace's: campaign %v, due %d, suppressed %v", k != nil, len(kr), ks)
		}
		return err
	})
}

// testCampaignsDraining: a campaign canceled with a recipient in progress stays among the
// open campaigns (and its agent's), so a claim returns the lease when it runs out; the
// write that moves its in-progress count to 0 takes it out. A completed campaign (no
// recipient in progress) is not open.
func testCampaignsDraining(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	c, rs := campaignFixture(g, "ws_1", t0)
	done, drs := campaignFixture(g, "ws_1", t0)
	update(t, s, func(tx service.Tx) error {
		if err := tx.InsertCampaign(c, rs); err != nil {
			return err
		}
		return tx.InsertCampaign(done, drs)
	})
	leased := leaseFirstRecipient(t, s, c, rs, t0)
	done.Status, done.Counts.Pending = data.CampaignCompleted, 0
	done.Counts.Add(data.RecipientCompleted, data.OutcomeAnswered, 3)
	c.Status, c.Counts.Canceled, c.Counts.Pending = data.CampaignCanceled, 2, 0
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutCampaign(done); err != nil {
			return err
		}
		return tx.PutCampaign(c)
	})
	checkOpenCampaigns(t, s, []string{c.ID}, "canceled with one recipient in progress")
	returned := leased
	returned.State, returned.LeaseUntil, returned.CallID = data.RecipientCanceled, nil, nil
	c.Counts.InProgress, c.Counts.Canceled = 0, 3
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutRecipient(&leased, &returned); err != nil {
			return err
		}
		return tx.PutCampaign(c)
	})
	checkOpenCampaigns(t, s, nil, "canceled with its last lease returned")
	view(t, s, func(tx service.Tx) error {
		got, err := tx.Campaign(c.ID)
		if err != nil || got == nil || got.Status != data.CampaignCanceled || got.Counts.InProgress != 0 {
			t.Fatalf("the canceled campaign: %+v %v", got, err)
		}
		return err
	})
}

// checkOpenCampaigns fails the test unless ws_1's open campaigns, and agt_1's, are want.
func checkOpenCampaigns(t *testing.T, s service.Store, want []string, when string) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		open, err := tx.OpenCampaigns("ws_1")
		if err != nil {
			return err
		}
		var ids []string
		for _, c := range open {
			ids = append(ids, c.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%s: open campaigns %v, want %v", when, ids, want)
		}
		agents, err := tx.AgentCampaigns("ws_1", "agt_1")
		if !slices.Equal(agents, want) {
			t.Errorf("%s: the agent's open campaigns %v, want %v", when, agents, want)
		}
		return err
	})
}
