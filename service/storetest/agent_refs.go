package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testAgentRefs: what other resources read of agents (AgentRef, the agents quota, pages of
// ids) and what an agent's or a knowledge base's delete does to the records around it.
func testAgentRefs(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	const ws = "ws_01JD6000000000000000000001"
	pub, draft := storedAgent(g.New(data.PrefixAgent), ws, data.AgentStatusPublished), storedAgent(g.New(data.PrefixAgent), ws, data.AgentStatusDraft)
	two := 2
	pub.PublishedVersion, pub.LastVersion = &two, 2
	kbGone, kbKept := g.New(data.PrefixKnowledgeBase), g.New(data.PrefixKnowledgeBase)
	draft.LLMConfig.KnowledgeBaseIDs = []string{kbGone, kbKept}
	call := newCall(g, ws, pub.ID, data.DirectionWeb, data.CallRegistered)
	update(t, s, func(tx service.Tx) error {
		for _, kb := range []string{kbGone, kbKept} {
			if err := tx.InsertKnowledgeBase(&data.KnowledgeBase{ID: kb, Name: "KB", WorkspaceID: ws}); err != nil {
				return err
			}
		}
		for _, a := range []*data.StoredAgent{pub, draft} {
			if err := tx.PutAgent(a, ""); err != nil {
				return err
			}
		}
		// pub's row names no knowledge base, its version 2 (live) kbKept.
		live := &data.AgentVersion{AgentID: pub.ID, VersionNumber: 2, Name: "v2"}
		live.LLMConfig.KnowledgeBaseIDs = []string{kbKept}
		if err := tx.PutAgentVersion(live); err != nil {
			return err
		}
		return tx.InsertCall(call)
	})
	checkAgentRefsRead(t, s, ws, pub, draft)
	checkKnowledgeBaseDeleteUnlinks(t, s, draft, pub, kbGone, kbKept)
	checkAgentDeleteKeepsCalls(t, s, ws, pub, call.ID)
}

// checkAgentRefsRead checks what other resources read of the published agent pub and
// the draft: AgentRef, the agents quota, and pages of one id.
func checkAgentRefsRead(t *testing.T, s service.Store, ws string, pub, draft *data.StoredAgent) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		found, version, err := tx.AgentRef(ws, pub.ID)
		if err != nil || !found || version == nil || *version != 2 {
			t.Errorf("AgentRef of a published agent = %v, %v, %v; want true, 2", found, version, err)
		}
		if found, version, _ := tx.AgentRef(ws, draft.ID); !found || version != nil {
			t.Errorf("AgentRef of a draft = %v, %v; want true, nil", found, version)
		}
		if found, _, _ := tx.AgentRef("ws_01JD6000000000000000000002", pub.ID); found {
			t.Error("AgentRef found an agent in another workspace")
		}
		if n, err := tx.CountUpTo(data.LimitAgents, ws, -1); err != nil || n != 2 {
			t.Errorf("agents counted = %d, %v; want 2", n, err)
		}
		if n, _ := tx.CountUpTo(data.LimitAgents, ws, 1); n != 1 {
			t.Errorf("agents counted up to 1 = %d", n)
		}
		first, page, err := tx.AgentIDs(ws, "", nil, service.AgentSearch{}, data.PageRequest{PerPage: 1})
		if err != nil || len(first) != 1 || first[0] != draft.ID || page.NextCursor == nil {
			t.Fatalf("first page of one id: %v %+v %v", first, page, err)
		}
		second, page, err := tx.AgentIDs(ws, "", nil, service.AgentSearch{}, data.PageRequest{PerPage: 1, Cursor: *page.NextCursor})
		if err != nil || len(second) != 1 || second[0] != pub.ID || page.NextCursor != nil || page.PrevCursor == nil {
			t.Errorf("second page of one id: %v %+v %v", second, page, err)
		}
		return nil
	})
}

// checkKnowledgeBaseDeleteUnlinks deletes the knowledge base kbGone and checks it is
// dropped from the agents' knowledge_base_ids, kbKept kept, and the draft's revision
// changes with its row.
func checkKnowledgeBaseDeleteUnlinks(t *testing.T, s service.Store, draft, pub *data.StoredAgent, kbGone, kbKept string) {
	t.Helper()
	var revision uint64
	view(t, s, func(tx service.Tx) error {
		var err error
		revision, err = tx.AgentRevision(draft.ID)
		return err
	})
	checkAgentsUsing(t, s, draft.WorkspaceID, kbGone, []string{draft.ID})
	checkAgentsUsing(t, s, "ws_01JD6000000000000000000002", kbGone, nil)
	checkAgentIDsUsing(t, s, draft, pub, kbGone, kbKept)
	update(t, s, func(tx service.Tx) error {
		kb, err := tx.KnowledgeBase(kbGone)
		if err != nil || kb == nil {
			t.Fatalf("knowledge base: %+v, %v", kb, err)
		}
		return tx.DeleteKnowledgeBase(kb)
	})
	view(t, s, func(tx service.Tx) error {
		a, err := tx.Agent(draft.ID)
		if err != nil || a == nil || !slices.Equal(a.LLMConfig.KnowledgeBaseIDs, []string{kbKept}) {
			t.Errorf("knowledge_base_ids after a knowledge base's delete: %+v, %v", a, err)
		}
		if rev, _ := tx.AgentRevision(draft.ID); rev == revision {
			t.Error("the revision did not change with the knowledge_base_ids")
		}
		if p, _ := tx.Agent(pub.ID); p == nil || len(p.LLMConfig.KnowledgeBaseIDs) != 0 {
			t.Errorf("an agent without knowledge bases: %+v", p)
		}
		return err
	})
	checkAgentsUsing(t, s, draft.WorkspaceID, kbGone, nil)
	checkAgentsUsing(t, s, draft.WorkspaceID, kbKept, []string{draft.ID, pub.ID})
}

// checkAgentsUsing checks that AgentsUsingKnowledgeBase(ws, kbID) names exactly want, in any order.
func checkAgentsUsing(t *testing.T, s service.Store, ws, kbID string, want []string) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		got, err := tx.AgentsUsingKnowledgeBase(ws, kbID)
		slices.Sort(got)
		want = slices.Sorted(slices.Values(want))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("AgentsUsingKnowledgeBase(%s, %s) = %v, %v; want %v", ws, kbID, got, err, want)
		}
		return err
	})
}

// checkAgentDeleteKeepsCalls deletes pub and checks its call stays.
func checkAgentDeleteKeepsCalls(t *testing.T, s service.Store, ws string, pub *data.StoredAgent, callID string) {
	t.Helper()
	update(t, s, func(tx service.Tx) error { return tx.DeleteAgent(pub) })
	view(t, s, func(tx service.Tx) error {
		if found, _, _ := tx.AgentRef(ws, pub.ID); found {
			t.Error("AgentRef finds a deleted agent")
		}
		if n, _ := tx.CountUpTo(data.LimitAgents, ws, -1); n != 1 {
			t.Errorf("agents counted after a delete = %d, want 1", n)
		}
		c, err := tx.Call(callID)
		if c == nil {
			t.Error("a deleted agent's call is gone")
		}
		return err
	})
}

// checkAgentIDsUsing checks the agents list's knowledge base filter against
// AgentsUsingKnowledgeBase: kbKept is named by the draft's row and by pub's version only,
// kbGone by the draft's row; only, the name and the status narrow it; its pages join, and
// its cursor is refused under another knowledge base.
func checkAgentIDsUsing(t *testing.T, s service.Store, draft, pub *data.StoredAgent, kbGone, kbKept string) {
	t.Helper()
	ws := draft.WorkspaceID
	view(t, s, func(tx service.Tx) error {
		for _, c := range []struct {
			name, status, nameContains, kb string
			only                           []string
			want                           []string
		}{
			{"row or version", "", "", kbKept, nil, []string{draft.ID, pub.ID}},
			{"row only", "", "", kbGone, nil, []string{draft.ID}},
			{"within only", "", "", kbKept, []string{pub.ID}, []string{pub.ID}},
			{"outside only", "", "", kbGone, []string{pub.ID}, nil},
			{"with a status", data.AgentStatusPublished, "", kbKept, nil, []string{pub.ID}},
			{"with a name", "", strings.ToUpper(pub.Name), kbKept, nil, []string{pub.ID}},
			{"unknown", "", "", "kb_01JD6ZZZZZZZZZZZZZZZZZZZZZ", nil, nil},
		} {
			got, page, err := tx.AgentIDs(ws, c.status, c.only, service.AgentSearch{Name: c.nameContains, KnowledgeBaseID: c.kb}, data.PageRequest{PerPage: 10})
			if err != nil || !slices.Equal(got, c.want) || page.NextCursor != nil {
				t.Errorf("%s: AgentIDs = %v %+v %v; want %v", c.name, got, page, err, c.want)
			}
		}
		if other, _, _ := tx.AgentIDs("ws_01JD6000000000000000000002", "", nil, service.AgentSearch{KnowledgeBaseID: kbKept}, data.PageRequest{PerPage: 10}); len(other) != 0 {
			t.Errorf("another workspace's agents using it: %v", other)
		}
		first, page, err := tx.AgentIDs(ws, "", nil, service.AgentSearch{KnowledgeBaseID: kbKept}, data.PageRequest{PerPage: 1})
		if err != nil || !slices.Equal(first, []string{draft.ID}) || page.NextCursor == nil {
			t.Fatalf("first page using %s: %v %+v %v", kbKept, first, page, err)
		}
		second, _, err := tx.AgentIDs(ws, "", nil, service.AgentSearch{KnowledgeBaseID: kbKept}, data.PageRequest{PerPage: 1, Cursor: *page.NextCursor})
		if err != nil || !slices.Equal(second, []string{pub.ID}) {
			t.Errorf("second page using %s: %v %v", kbKept, second, err)
		}
		if _, _, err := tx.AgentIDs(ws, "", nil, service.AgentSearch{KnowledgeBaseID: kbGone}, data.PageRequest{PerPage: 1, Cursor: *page.NextCursor}); data.ErrorCode(err) != data.EINVALID {
			t.Errorf("a cursor of another knowledge base: %v, want a 422 on cursor", err)
		}
		return nil
	})
}
