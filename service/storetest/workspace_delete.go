package storetest

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testWorkspaceDelete checks DeleteWorkspace's cascade over the accounts' records (the
// tokens, which WorkspaceTokens lists first: what they kept under Idempotency-Keys is the
// service's to take, in batches) and the workspace's events and chain head, and that
// another workspace keeps its own.
func testWorkspaceDelete(t *testing.T, open Opener) {
	s := open(t)
	gone, kept := wsIDs[0], wsIDs[1]
	keys := map[string]*data.APIKeyRecord{}
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutUser(accountUser(usrIDs[0], "a@example.com")); err != nil {
			return err
		}
		for i, ws := range []string{gone, kept} {
			steps := []func() error{
				func() error {
					return tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: ws, Name: "W"}})
				},
				func() error { return tx.PutMember(accountMember(ws, usrIDs[0], data.RoleOwner)) },
				func() error {
					keys[ws] = accountKey(usrIDs[0], ws, data.TokenAPIKey)
					return tx.InsertAPIKey(keys[ws])
				},
				func() error {
					// What the token kept under Idempotency-Keys: a create's answer, a message's.
					for _, r := range []*data.IdempotentResponse{{Status: 201, Body: []byte("agent")},
						{Status: 200, Body: []byte("turn"), ConversationID: "conv_" + ws}} {
						if err := tx.PutIdempotentResponse(keys[ws].ID, string(r.Body), r); err != nil {
							return err
						}
					}
					return nil
				},
				func() error { return tx.PutSubscriptionPlan(ws, &data.SubscriptionPlan{Plan: "pro", Status: "active"}) },
				func() error {
					return tx.AppendEvent(&data.Event{ID: []string{"evt_1", "evt_2"}[i], Type: data.EventAgentCreated, WorkspaceID: ws, Data: []byte(`{}`), Hash: "h" + ws})
				},
			}
			for _, step := range steps {
				if err := step(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	view(t, s, func(tx service.Tx) error {
		ids, err := tx.WorkspaceTokens(gone)
		if len(ids) != 1 || ids[0] != keys[gone].ID {
			t.Errorf("WorkspaceTokens = %v; want [%d]", ids, keys[gone].ID)
		}
		return err
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace(gone) })
	view(t, s, func(tx service.Tx) error {
		w, err := tx.Workspace(gone)
		exists, _ := tx.WorkspaceExists(gone)
		m, _ := tx.Member(gone, usrIDs[0])
		k, _ := tx.APIKey(keys[gone].ID)
		plan, _ := tx.SubscriptionPlan(gone)
		head, _ := tx.EventHead(gone)
		e, _ := tx.Event("evt_1")
		if w != nil || exists || m != nil || k != nil || plan != nil || head != "" || e != nil {
			t.Errorf("after DeleteWorkspace: workspace %v (exists %v), member %v, token %v, plan %v, head %q, event %v; want all gone", w, exists, m, k, plan, head, e)
		}
		w, _ = tx.Workspace(kept)
		m, _ = tx.Member(kept, usrIDs[0])
		k, _ = tx.APIKey(keys[kept].ID)
		plan, _ = tx.SubscriptionPlan(kept)
		head, _ = tx.EventHead(kept)
		if w == nil || m == nil || k == nil || plan == nil || head != "h"+kept {
			t.Errorf("another workspace lost records: workspace %v, member %v, token %v, plan %v, head %q", w, m, k, plan, head)
		}
		for _, key := range []string{"agent", "turn"} {
			if r, err := tx.IdempotentResponse(keys[kept].ID, key); err != nil || r == nil {
				t.Errorf("another workspace's token lost %q: %v", key, err)
			}
		}
		if u, _ := tx.User(usrIDs[0]); u == nil {
			t.Error("the member's account went with the workspace")
		}
		return err
	})
}

// testAgentDeleteMembers checks the cascade of an agent's delete over members' agent_ids:
// the agent leaves every list, and a list it leaves empty becomes data.NoAgent (empty
// would mean every agent).
func testAgentDeleteMembers(t *testing.T, open Opener) {
	s := open(t)
	ws := wsIDs[0]
	agents := []string{"agt_01JD6000000000000000000001", "agt_01JD6000000000000000000002"}
	update(t, s, func(tx service.Tx) error {
		for _, id := range agents {
			if err := tx.PutAgent(storedAgent(id, ws, data.AgentStatusDraft), ""); err != nil {
				return err
			}
		}
		lists := [][]string{{agents[0]}, {agents[0], agents[1]}, {agents[1]}}
		for i, ids := range lists {
			m := accountMember(ws, usrIDs[i], data.RoleMember)
			m.AgentIDs = ids
			if err := tx.PutMember(m); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(tx service.Tx) error {
		in, err := tx.AgentInWorkspace(ws, agents[0])
		out, _ := tx.AgentInWorkspace(wsIDs[1], agents[0])
		if !in || out {
			t.Errorf("AgentInWorkspace: own workspace %v, another %v", in, out)
		}
		return err
	})
	revs := map[string]uint64{}
	update(t, s, func(tx service.Tx) error {
		for _, u := range usrIDs {
			revs[u], _ = tx.MemberRevision(ws, u)
		}
		a, err := tx.Agent(agents[0])
		if err != nil || a == nil {
			return err
		}
		return tx.DeleteAgent(a)
	})
	view(t, s, func(tx service.Tx) error {
		want := [][]string{{data.NoAgent}, {agents[1]}, {agents[1]}}
		for i, u := range usrIDs {
			m, err := tx.Member(ws, u)
			if err != nil || m == nil || len(m.AgentIDs) != len(want[i]) || m.AgentIDs[0] != want[i][0] {
				t.Errorf("member %s agent_ids after the delete = %v, want %v", u, m, want[i])
			}
			rev, _ := tx.MemberRevision(ws, u)
			if changed := rev != revs[u]; changed != (i < 2) {
				t.Errorf("member %s revision changed = %v, want %v (its agent_ids changed)", u, changed, i < 2)
			}
		}
		return nil
	})
}
