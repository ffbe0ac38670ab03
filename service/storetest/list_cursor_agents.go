package storetest

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"list_cursors_bind_agents", testListCursorsBindAgents})
}

// testListCursorsBindAgents: every list narrowed by the caller's agents (conversations,
// campaigns, calls) binds them in its cursors, as it binds its filters: a cursor handed
// to a caller who sees other agents (every agent, fewer, more) is refused (422 on
// cursor) rather than paging a different set; the same agents page on.
func testListCursorsBindAgents(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ws := g.New(data.PrefixWorkspace)
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: ws, Name: ws, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}}); err != nil {
			return err
		}
		opening := []data.ConversationItem{{Role: data.ItemAgent, Content: "Hello", Knowledge: []data.KnowledgeRef{}, CreatedAt: data.NewTime(t0)}}
		for i, agent := range []string{"agt_a", "agt_b", "agt_a", "agt_b"} {
			conv := storedConversation(g, ws, t0.Add(time.Duration(i)*time.Minute))
			conv.AgentID, conv.Items = agent, 1
			if err := tx.InsertConversation(conv, opening); err != nil {
				return err
			}
			c, _ := campaignFixture(g, ws, t0)
			c.AgentID, c.Counts = agent, data.CampaignCounts{}
			if err := tx.InsertCampaign(c, nil); err != nil {
				return err
			}
			if err := tx.InsertCall(newCall(g, ws, agent, data.DirectionWeb, data.CallRegistered)); err != nil {
				return err
			}
		}
		return nil
	})
	lists := map[string]func(tx service.Tx, agents []string, req data.PageRequest) (data.Page, error){
		"conversations": func(tx service.Tx, agents []string, req data.PageRequest) (data.Page, error) {
			_, p, err := tx.ListConversations(ws, data.ConversationFilter{}, agents, req)
			return p, err
		},
		"campaigns": func(tx service.Tx, agents []string, req data.PageRequest) (data.Page, error) {
			_, p, err := tx.Campaigns(ws, data.CampaignFilter{}, agents, req)
			return p, err
		},
		"calls": func(tx service.Tx, agents []string, req data.PageRequest) (data.Page, error) {
			_, p, err := tx.Calls(ws, agents, data.CallFilter{}, req)
			return p, err
		},
	}
	both, a := []string{"agt_a", "agt_b"}, []string{"agt_a"}
	for name, list := range lists {
		view(t, s, func(tx service.Tx) error {
			cursor := func(agents []string) string {
				p, err := list(tx, agents, data.PageRequest{PerPage: 1})
				if err != nil || p.NextCursor == nil {
					t.Fatalf("%s of %v: first page %+v, %v; want a next page", name, agents, p, err)
				}
				return *p.NextCursor
			}
			for _, c := range []struct {
				minted, replayed []string
				ok               bool
			}{
				{both, both, true},
				{nil, nil, true},
				{both, nil, false},
				{both, a, false},
				{nil, both, false},
				{a, both, false},
				{a, []string{}, false},
			} {
				_, err := list(tx, c.replayed, data.PageRequest{PerPage: 1, Cursor: cursor(c.minted)})
				if c.ok && err != nil || !c.ok && data.ErrorCode(err) != data.EINVALID {
					t.Errorf("%s: a cursor of agents %v replayed with %v: %v; want refused %v", name, c.minted, c.replayed, err, !c.ok)
				}
			}
			return nil
		})
	}
}
