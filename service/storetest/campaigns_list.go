package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() { suites = append(suites, suite{"campaigns_list", testCampaignList}) }

// testCampaignList: GET /api/v1/campaigns' storage read, newest first: the whole list,
// an agent's, a status's, a caller's agents', each walked forward and back at several
// page sizes; a status change moves a campaign between the status lists, a delete and
// the workspace's delete take it, another workspace's stays.
func testCampaignList(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var all []*data.Campaign // ws_1's, oldest first
	agentOf := []string{"agt_a", "agt_b", "agt_a", "agt_c", "agt_a", "agt_b", "agt_a"}
	statusOf := []string{data.CampaignCompleted, data.CampaignRunning, data.CampaignCanceled, data.CampaignRunning,
		data.CampaignPaused, data.CampaignCompleted, data.CampaignScheduled}
	for i := range agentOf {
		c, _ := campaignFixture(g, "ws_1", t0)
		c.AgentID, c.Status, c.Counts = agentOf[i], statusOf[i], data.CampaignCounts{}
		all = append(all, c)
	}
	other, _ := campaignFixture(g, "ws_2", t0)
	other.AgentID, other.Counts = "agt_a", data.CampaignCounts{}
	update(t, s, func(tx service.Tx) error {
		for _, w := range []string{"ws_1", "ws_2"} {
			if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: w, Name: w, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}}); err != nil {
				return err
			}
		}
		for _, c := range append(all, other) {
			if err := tx.InsertCampaign(c, nil); err != nil {
				return err
			}
		}
		return nil
	})
	ids := func(idx ...int) []string {
		out := make([]string, len(idx))
		for i, n := range idx {
			out[i] = all[n].ID
		}
		return out
	}
	cases := []struct {
		name   string
		f      data.CampaignFilter
		agents []string
		want   []string // newest first
	}{
		{"all", data.CampaignFilter{}, nil, ids(6, 5, 4, 3, 2, 1, 0)},
		{"one agent", data.CampaignFilter{AgentID: "agt_a"}, nil, ids(6, 4, 2, 0)},
		{"running", data.CampaignFilter{Status: data.CampaignRunning}, nil, ids(3, 1)},
		{"completed", data.CampaignFilter{Status: data.CampaignCompleted}, nil, ids(5, 0)},
		{"one agent's completed", data.CampaignFilter{AgentID: "agt_a", Status: data.CampaignCompleted}, nil, ids(0)},
		{"the caller's agents", data.CampaignFilter{}, []string{"agt_a", "agt_c"}, ids(6, 4, 3, 2, 0)},
		{"the caller's agents, running", data.CampaignFilter{Status: data.CampaignRunning}, []string{"agt_b", "agt_c"}, ids(3, 1)},
		{"the caller's agents, completed", data.CampaignFilter{Status: data.CampaignCompleted}, []string{"agt_a", "agt_b"}, ids(5, 0)},
		{"an agent among the caller's", data.CampaignFilter{AgentID: "agt_c"}, []string{"agt_b", "agt_c"}, ids(3)},
		{"an agent not the caller's", data.CampaignFilter{AgentID: "agt_a"}, []string{"agt_b"}, []string{}},
		{"no agent of the caller's", data.CampaignFilter{}, []string{}, []string{}},
		{"an agent without any", data.CampaignFilter{AgentID: "agt_none"}, nil, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, per := range []int{1, 2, 3, 100} {
				if got := pageAllCampaigns(t, s, "ws_1", c.f, c.agents, per); !reflect.DeepEqual(got, c.want) {
					t.Errorf("per_page %d: %v, want %v", per, got, c.want)
				}
			}
		})
	}
	// A status change (a PutCampaign, as a pause, a cancel or the last outcome writes).
	all[3].Status = data.CampaignCompleted
	update(t, s, func(tx service.Tx) error { return tx.PutCampaign(all[3]) })
	update(t, s, func(tx service.Tx) error { return tx.DeleteCampaign(all[5]) })
	for _, c := range []struct {
		f    data.CampaignFilter
		want []string
	}{
		{data.CampaignFilter{Status: data.CampaignRunning}, ids(1)},
		{data.CampaignFilter{Status: data.CampaignCompleted}, ids(3, 0)},
		{data.CampaignFilter{AgentID: "agt_c", Status: data.CampaignCompleted}, ids(3)},
		{data.CampaignFilter{}, ids(6, 4, 3, 2, 1, 0)},
	} {
		if got := pageAllCampaigns(t, s, "ws_1", c.f, nil, 2); !reflect.DeepEqual(got, c.want) {
			t.Errorf("after a status change and a delete, %+v = %v, want %v", c.f, got, c.want)
		}
	}
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace("ws_1") })
	for _, f := range []data.CampaignFilter{{}, {AgentID: "agt_a"}, {Status: data.CampaignCompleted}, {AgentID: "agt_a", Status: data.CampaignScheduled}} {
		if got := pageAllCampaigns(t, s, "ws_1", f, nil, 10); len(got) != 0 {
			t.Errorf("a deleted workspace's list %+v = %v", f, got)
		}
	}
	if got := pageAllCampaigns(t, s, "ws_2", data.CampaignFilter{AgentID: "agt_a", Status: data.CampaignRunning}, nil, 10); !reflect.DeepEqual(got, []string{other.ID}) {
		t.Errorf("another workspace's delete took %v", got)
	}
}

// pageAllCampaigns walks every page of a campaign list by next_cursor, then back from
// the last by prev_cursor, checking each page's size and that the walk back meets the
// same.
func pageAllCampaigns(t *testing.T, s service.Store, ws string, f data.CampaignFilter, agents []string, per int) []string {
	t.Helper()
	read := func(cursor string) ([]string, data.Page) {
		var list []*data.Campaign
		var page data.Page
		view(t, s, func(tx service.Tx) error {
			var err error
			list, page, err = tx.Campaigns(ws, f, agents, data.PageRequest{PerPage: per, Cursor: cursor})
			return err
		})
		if len(list) > per {
			t.Fatalf("a page of %d holds %d", per, len(list))
		}
		ids := make([]string, len(list))
		for i, c := range list {
			ids[i] = c.ID
		}
		return ids, page
	}
	out := []string{}
	ids, page := read("")
	for range 50 {
		out = append(out, ids...)
		if page.NextCursor == nil {
			back := ids
			for range 50 {
				if page.PrevCursor == nil {
					if !reflect.DeepEqual(back, out) {
						t.Errorf("%+v of %v by %d, walked back: %v, forward: %v", f, agents, per, back, out)
					}
					return out
				}
				ids, page = read(*page.PrevCursor)
				back = append(ids, back...)
			}
			t.Fatal("the walk back does not end")
		}
		ids, page = read(*page.NextCursor)
	}
	t.Fatal("the list does not end")
	return nil
}
