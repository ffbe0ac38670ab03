package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"conversations_list", testConversationList})
}

// testConversationList: ListConversations pages a workspace's conversations newest first,
// by agent, by status (which moves with an end), by the caller's agents; pages join
// without a gap or a repeat both ways; a deleted conversation and a deleted workspace's
// are gone; another workspace's never show; records come without their items.
func testConversationList(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ws1, ws2 := g.New(data.PrefixWorkspace), g.New(data.PrefixWorkspace)
	var all []*data.StoredConversation // ws1's, oldest first
	agentOf := []string{"agt_a", "agt_b", "agt_a", "agt_c", "agt_a", "agt_b", "agt_a"}
	for i, agent := range agentOf {
		c := storedConversation(g, ws1, t0.Add(time.Duration(i)*time.Minute))
		c.AgentID = agent
		all = append(all, c)
	}
	other := storedConversation(g, ws2, t0)
	other.AgentID = "agt_a"
	opening := []data.ConversationItem{{Role: data.ItemAgent, Content: "Hello", Knowledge: []data.KnowledgeRef{}, CreatedAt: data.NewTime(t0)}}
	update(t, s, func(tx service.Tx) error {
		for _, w := range []string{ws1, ws2} {
			if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: w, Name: w, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}}); err != nil {
				return err
			}
		}
		for _, c := range append(all, other) {
			c.Items = 1
			if err := tx.InsertConversation(c, opening); err != nil {
				return err
			}
		}
		return nil
	})
	// End conversations 1 and 4 (a PutConversation, as the service's end does).
	for _, i := range []int{1, 4} {
		c := all[i]
		ended, reason := data.NewTime(t0.Add(time.Hour)), data.EndUserEnded
		c.Status, c.EndedAt, c.DisconnectionReason, c.UpdatedAt = data.ConversationEnded, &ended, &reason, ended
		update(t, s, func(tx service.Tx) error { return tx.PutConversation(c, nil) })
	}
	ids := func(idx ...int) []string {
		out := make([]string, len(idx))
		for i, n := range idx {
			out[i] = all[n].ID
		}
		return out
	}
	cases := []struct {
		name   string
		f      data.ConversationFilter
		agents []string
		want   []string // newest first
	}{
		{"all", data.ConversationFilter{}, nil, ids(6, 5, 4, 3, 2, 1, 0)},
		{"one agent", data.ConversationFilter{AgentID: "agt_a"}, nil, ids(6, 4, 2, 0)},
		{"active", data.ConversationFilter{Status: data.ConversationActive}, nil, ids(6, 5, 3, 2, 0)},
		{"ended", data.ConversationFilter{Status: data.ConversationEnded}, nil, ids(4, 1)},
		{"one agent's ended", data.ConversationFilter{AgentID: "agt_b", Status: data.ConversationEnded}, nil, ids(1)},
		{"the caller's agents", data.ConversationFilter{}, []string{"agt_b", "agt_c"}, ids(5, 3, 1)},
		{"the caller's agents, active", data.ConversationFilter{Status: data.ConversationActive}, []string{"agt_b", "agt_c"}, ids(5, 3)},
		{"the caller's agents, one with more than a page", data.ConversationFilter{}, []string{"agt_a", "agt_c"}, ids(6, 4, 3, 2, 0)},
		{"the caller's agents, ended", data.ConversationFilter{Status: data.ConversationEnded}, []string{"agt_a", "agt_b"}, ids(4, 1)},
		{"an agent among the caller's", data.ConversationFilter{AgentID: "agt_c"}, []string{"agt_b", "agt_c"}, ids(3)},
		{"an agent not the caller's", data.ConversationFilter{AgentID: "agt_a"}, []string{"agt_b"}, []string{}},
		{"no agent of the caller's", data.ConversationFilter{}, []string{}, []string{}},
		{"an agent without any", data.ConversationFilter{AgentID: "agt_none"}, nil, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, per := range []int{1, 2, 3, 100} {
				if got := pageAllConversations(t, s, ws1, c.f, c.agents, per); !reflect.DeepEqual(got, c.want) {
					t.Errorf("per_page %d: %v, want %v", per, got, c.want)
				}
			}
		})
	}
	checkConversationListRecords(t, s, ws1, all)
	checkConversationListBack(t, s, ws1, ids(6, 5, 4, 3, 2, 1, 0))

	if got := pageAllConversations(t, s, ws2, data.ConversationFilter{}, nil, 10); !reflect.DeepEqual(got, []string{other.ID}) {
		t.Errorf("the other workspace's list = %v, want only its own", got)
	}
	update(t, s, func(tx service.Tx) error { return tx.DeleteConversation(all[6].ID) })
	if got := pageAllConversations(t, s, ws1, data.ConversationFilter{AgentID: "agt_a"}, nil, 2); !reflect.DeepEqual(got, ids(4, 2, 0)) {
		t.Errorf("after a delete, agt_a's = %v, want %v", got, ids(4, 2, 0))
	}
	if got := pageAllConversations(t, s, ws1, data.ConversationFilter{}, nil, 2); !reflect.DeepEqual(got, ids(5, 4, 3, 2, 1, 0)) {
		t.Errorf("after a delete = %v", got)
	}
	for _, c := range []struct {
		f    data.ConversationFilter
		want []string
	}{
		{data.ConversationFilter{Status: data.ConversationActive}, ids(5, 3, 2, 0)},
		{data.ConversationFilter{AgentID: "agt_a", Status: data.ConversationActive}, ids(2, 0)},
	} {
		if got := pageAllConversations(t, s, ws1, c.f, nil, 2); !reflect.DeepEqual(got, c.want) {
			t.Errorf("after a delete, %+v = %v, want %v", c.f, got, c.want)
		}
	}
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace(ws1) })
	for _, f := range []data.ConversationFilter{{}, {AgentID: "agt_a"}, {Status: data.ConversationActive}, {Status: data.ConversationEnded},
		{AgentID: "agt_b", Status: data.ConversationEnded}} {
		if got := pageAllConversations(t, s, ws1, f, nil, 10); len(got) != 0 {
			t.Errorf("a deleted workspace's list %+v = %v", f, got)
		}
	}
	if got := pageAllConversations(t, s, ws2, data.ConversationFilter{AgentID: "agt_a"}, nil, 10); !reflect.DeepEqual(got, []string{other.ID}) {
		t.Errorf("another workspace's delete took %v", got)
	}
}

// pageAllConversations walks every page of a list by next_cursor, checking each page's
// size, then back from the last by prev_cursor, checking the walk back meets the same.
func pageAllConversations(t *testing.T, s service.Store, ws string, f data.ConversationFilter, agents []string, per int) []string {
	t.Helper()
	read := func(cursor string) ([]string, data.Page) {
		var list []*data.StoredConversation
		var page data.Page
		view(t, s, func(tx service.Tx) error {
			var err error
			list, page, err = tx.ListConversations(ws, f, agents, data.PageRequest{PerPage: per, Cursor: cursor})
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

// checkConversationListRecords checks a listed conversation is the stored record, without
// its items.
func checkConversationListRecords(t *testing.T, s service.Store, ws string, all []*data.StoredConversation) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		list, _, err := tx.ListConversations(ws, data.ConversationFilter{Status: data.ConversationEnded}, nil, data.PageRequest{PerPage: 1})
		if err != nil || len(list) != 1 {
			t.Fatalf("ListConversations = %v, %v", list, err)
		}
		want, err := tx.Conversation(all[4].ID)
		if err != nil || !reflect.DeepEqual(list[0], want) || list[0].Messages != nil || want.Status != data.ConversationEnded {
			t.Errorf("listed\n%+v\nwant the stored record\n%+v (%v)", list[0], want, err)
		}
		return nil
	})
}

// checkConversationListBack pages forward by 3, then back from the last page by
// prev_cursor: the pages join, and a cursor of one filter is refused by another.
func checkConversationListBack(t *testing.T, s service.Store, ws string, want []string) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		first, p1, err := tx.ListConversations(ws, data.ConversationFilter{}, nil, data.PageRequest{PerPage: 3})
		if err != nil || p1.NextCursor == nil || p1.PrevCursor != nil {
			t.Fatalf("first page: %v, %+v, %v", first, p1, err)
		}
		second, p2, err := tx.ListConversations(ws, data.ConversationFilter{}, nil, data.PageRequest{PerPage: 3, Cursor: *p1.NextCursor})
		if err != nil || p2.PrevCursor == nil {
			t.Fatalf("second page: %v, %+v, %v", second, p2, err)
		}
		if got := []string{second[0].ID, second[1].ID, second[2].ID}; !reflect.DeepEqual(got, want[3:6]) {
			t.Errorf("second page = %v, want %v", got, want[3:6])
		}
		back, _, err := tx.ListConversations(ws, data.ConversationFilter{}, nil, data.PageRequest{PerPage: 3, Cursor: *p2.PrevCursor})
		if err != nil || len(back) != 3 || back[0].ID != want[0] || back[2].ID != want[2] {
			t.Errorf("back from the second page = %v, %v; want %v", back, err, want[:3])
		}
		if _, _, err := tx.ListConversations(ws, data.ConversationFilter{Status: data.ConversationActive}, nil, data.PageRequest{PerPage: 3, Cursor: *p1.NextCursor}); data.ErrorCode(err) != data.EINVALID {
			t.Errorf("a cursor of another filter: %v, want a 422 on cursor", err)
		}
		return nil
	})
}
