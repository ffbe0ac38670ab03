package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"recipients_by_state", testRecipientsByState}, suite{"test_runs_by_status", testTestRunsByStatus})
}

// testRecipientsByState: a selection lists a campaign's recipients in its states only,
// newest first, each state (and none: an empty page), several merged by id; its pages
// walk forward and back; a state change moves a recipient between the lists; a cursor
// is bound to its filter; a deleted campaign's recipients leave every list.
func testRecipientsByState(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	c, rs := campaignFixture(g, "ws_1", t0)
	for i := range 6 { // 9 recipients: rs[i] is the i-th oldest
		at := data.NewTime(t0)
		rs = append(rs, &data.Recipient{ID: g.New(data.PrefixRecipient), CampaignID: c.ID, WorkspaceID: c.WorkspaceID,
			PhoneNumber: "+1415555011" + string(rune('0'+i)), State: data.RecipientPending, NextAt: &at, Attempts: []data.RecipientAttempt{}})
	}
	other, otherRs := campaignFixture(g, "ws_1", t0) // its pending ones are not c's
	update(t, s, func(tx service.Tx) error {
		if err := tx.InsertCampaign(c, rs); err != nil {
			return err
		}
		return tx.InsertCampaign(other, otherRs)
	})
	newestFirst := func(idx ...int) []string {
		out := make([]string, len(idx))
		for i, n := range idx {
			out[len(idx)-1-i] = rs[n].ID
		}
		return out
	}
	list := func(states ...string) []string {
		t.Helper()
		sel := service.StateSelection{Filter: "f", States: states}
		var ids []string
		view(t, s, func(tx service.Tx) error {
			got, page, err := tx.Recipients(c.ID, sel, data.PageRequest{PerPage: 100})
			if err == nil && (page.NextCursor != nil || page.PrevCursor != nil) {
				t.Errorf("%v: one page holds them all, yet it has cursors %+v", states, page)
			}
			ids = recipientIDs(got)
			return err
		})
		return ids
	}
	if got := list(data.RecipientPending); !slices.Equal(got, newestFirst(0, 1, 2, 3, 4, 5, 6, 7, 8)) {
		t.Fatalf("pending as inserted: %v", got)
	}
	// Every other state, each empty before any recipient moves into it.
	for _, st := range data.RecipientStates[1:] {
		if got := list(st); len(got) != 0 {
			t.Errorf("%s before any moved: %v, want none", st, got)
		}
	}
	moves := map[int]string{0: data.RecipientInProgress, 1: data.RecipientCompleted, 2: data.RecipientSuppressed,
		3: data.RecipientExhausted, 4: data.RecipientCanceled, 6: data.RecipientCompleted}
	update(t, s, func(tx service.Tx) error {
		for i, st := range moves {
			old := *rs[i]
			rs[i].State = st
			if err := tx.PutRecipient(&old, rs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	for st, want := range map[string][]string{
		data.RecipientPending: newestFirst(5, 7, 8), data.RecipientInProgress: newestFirst(0),
		data.RecipientCompleted: newestFirst(1, 6), data.RecipientSuppressed: newestFirst(2),
		data.RecipientExhausted: newestFirst(3), data.RecipientCanceled: newestFirst(4),
	} {
		if got := list(st); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", st, got, want)
		}
	}
	if got := list(data.RecipientCanceled, data.RecipientPending); !slices.Equal(got, newestFirst(4, 5, 7, 8)) {
		t.Errorf("canceled and pending merged: %v, want %v", got, newestFirst(4, 5, 7, 8))
	}
	if got := list(); len(got) != 0 {
		t.Errorf("a filter of no state: %v, want none", got)
	}
	// A recipient moved on leaves its list for the other, in the same write.
	update(t, s, func(tx service.Tx) error {
		old := *rs[7]
		rs[7].State = data.RecipientInProgress
		return tx.PutRecipient(&old, rs[7])
	})
	if got := list(data.RecipientPending); !slices.Equal(got, newestFirst(5, 8)) {
		t.Errorf("pending once rs[7] is leased: %v", got)
	}
	if got := list(data.RecipientInProgress); !slices.Equal(got, newestFirst(0, 7)) {
		t.Errorf("in_progress once rs[7] is leased: %v", got)
	}
	checkStatePages(t, s, c.ID, rs)
	update(t, s, func(tx service.Tx) error {
		if err := tx.DeleteCampaign(c); err != nil {
			return err
		}
		_, err := tx.DeleteCampaignRecipients(c.ID, 100)
		return err
	})
	for _, st := range data.RecipientStates {
		if got := list(st); len(got) != 0 {
			t.Errorf("%s after the campaign's delete: %v", st, got)
		}
	}
}

// checkStatePages walks the completed and in_progress recipients of rs merged (1, 6 and
// 0, 7: four), a page of 1 at a time, forward and back, and checks that a cursor is
// refused under another filter and by the unfiltered list.
func checkStatePages(t *testing.T, s service.Store, campaignID string, rs []*data.Recipient) {
	t.Helper()
	sel := service.StateSelection{Filter: "done", States: []string{data.RecipientCompleted, data.RecipientInProgress}}
	want := []string{rs[7].ID, rs[6].ID, rs[1].ID, rs[0].ID}
	var got []string
	var cursors []string // the cursor each page after the first was read with
	req := data.PageRequest{PerPage: 1}
	view(t, s, func(tx service.Tx) error {
		for range 10 {
			page, meta, err := tx.Recipients(campaignID, sel, req)
			if err != nil {
				return err
			}
			got = append(got, recipientIDs(page)...)
			if meta.NextCursor == nil {
				break
			}
			req.Cursor = *meta.NextCursor
			cursors = append(cursors, req.Cursor)
		}
		return nil
	})
	if !slices.Equal(got, want) {
		t.Fatalf("pages of 1 under the filter: %v, want %v", got, want)
	}
	view(t, s, func(tx service.Tx) error {
		// The last page's prev_cursor leads back to the page before it.
		_, meta, err := tx.Recipients(campaignID, sel, data.PageRequest{PerPage: 1, Cursor: cursors[len(cursors)-1]})
		if err != nil || meta.PrevCursor == nil {
			t.Fatalf("last page: %+v %v, want a prev_cursor", meta, err)
		}
		back, _, err := tx.Recipients(campaignID, sel, data.PageRequest{PerPage: 1, Cursor: *meta.PrevCursor})
		if err != nil || !slices.Equal(recipientIDs(back), want[2:3]) {
			t.Errorf("back a page: %v %v, want %v", recipientIDs(back), err, want[2:3])
		}
		otherFilter := service.StateSelection{Filter: "other", States: sel.States}
		if _, _, err := tx.Recipients(campaignID, otherFilter, data.PageRequest{PerPage: 1, Cursor: cursors[0]}); data.ErrorCode(err) != data.EINVALID {
			t.Errorf("a cursor under another filter: %v, want validation_failed", err)
		}
		if _, _, err := tx.Recipients(campaignID, service.StateSelection{}, data.PageRequest{PerPage: 1, Cursor: cursors[0]}); data.ErrorCode(err) != data.EINVALID {
			t.Errorf("a filtered list's cursor on the whole list: %v, want validation_failed", err)
		}
		return nil
	})
}

// testTestRunsByStatus: a selection lists an agent's runs in its stored statuses only,
// newest first, across pages, and follows a run's status change; a cursor is bound to
// its filter.
func testTestRunsByStatus(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	const ws, agent = "ws_1", "agt_01JD6000000000000000000001"
	test := *storedTest(g, ws, agent, "first", t0)
	statuses := []string{data.TestFailed, data.TestPassed, data.TestFailed, data.TestQueued, data.TestFailed, data.TestRunning}
	var runs []*data.StoredTestRun
	rev := `"aaa"`
	end := data.NewTime(t0.Add(time.Minute))
	update(t, s, func(tx service.Tx) error {
		for i, st := range statuses {
			r := storedRun(g, ws, agent, &rev, nil, []data.AgentTest{test}, t0.Add(time.Duration(i)*time.Second))
			r.Status = st
			if st != data.TestQueued {
				r.StartedAt = &end
			}
			if data.TestRunFinished(st) {
				r.FinishedAt = &end
			}
			runs = append(runs, r)
			if err := tx.PutTestRun(r); err != nil {
				return err
			}
		}
		return nil
	})
	page := func(sel service.StateSelection, req data.PageRequest) ([]string, data.Page) {
		t.Helper()
		var ids []string
		var meta data.Page
		view(t, s, func(tx service.Tx) error {
			got, m, err := tx.TestRunPage(agent, sel, req)
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			meta = m
			return err
		})
		return ids, meta
	}
	failed := service.StateSelection{Filter: data.TestFailed, States: []string{data.TestFailed}}
	first, meta := page(failed, data.PageRequest{PerPage: 2})
	if !slices.Equal(first, []string{runs[4].ID, runs[2].ID}) || meta.NextCursor == nil {
		t.Fatalf("failed, first page of 2: %v %+v", first, meta)
	}
	second, meta2 := page(failed, data.PageRequest{PerPage: 2, Cursor: *meta.NextCursor})
	if !slices.Equal(second, []string{runs[0].ID}) || meta2.NextCursor != nil {
		t.Errorf("failed, second page: %v %+v", second, meta2)
	}
	pending := service.StateSelection{Filter: data.TestError, States: []string{data.TestError, data.TestQueued, data.TestRunning}}
	if got, _ := page(pending, data.PageRequest{}); !slices.Equal(got, []string{runs[5].ID, runs[3].ID}) {
		t.Errorf("error, queued and running: %v", got)
	}
	if got, _ := page(service.StateSelection{Filter: data.TestPassed, States: []string{data.TestPassed}}, data.PageRequest{}); !slices.Equal(got, []string{runs[1].ID}) {
		t.Errorf("passed: %v", got)
	}
	update(t, s, func(tx service.Tx) error { // the queued run ends failed
		runs[3].Status, runs[3].StartedAt, runs[3].FinishedAt = data.TestFailed, &end, &end
		return tx.PutTestRun(runs[3])
	})
	if got, _ := page(failed, data.PageRequest{PerPage: 10}); !slices.Equal(got, []string{runs[4].ID, runs[3].ID, runs[2].ID, runs[0].ID}) {
		t.Errorf("failed once the queued run failed: %v", got)
	}
	view(t, s, func(tx service.Tx) error {
		passed := service.StateSelection{Filter: data.TestPassed, States: []string{data.TestPassed}}
		if _, _, err := tx.TestRunPage(agent, passed, data.PageRequest{PerPage: 2, Cursor: *meta.NextCursor}); data.ErrorCode(err) != data.EINVALID {
			t.Errorf("a cursor under another filter: %v, want validation_failed", err)
		}
		return nil
	})
}
