package storetest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"open_calls", testOpenCalls}, suite{"rollouts", testRollouts},
		suite{"number_by_phone", testNumberByPhone})
}

// sameJSON reports whether a and b encode alike.
func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func openIDs(list []service.OpenCall) []string {
	out := make([]string, len(list))
	for i, o := range list {
		out[i] = o.ID
	}
	slices.Sort(out)
	return out
}

// testOpenCalls: a workspace's open calls are exactly its registered and ongoing ones,
// with agent, version and start, following every insert, update and delete.
func testOpenCalls(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	a, b := g.New(data.PrefixAgent), g.New(data.PrefixAgent)
	v := 3
	registered := newCall(g, "ws_1", a, data.DirectionInbound, data.CallRegistered)
	registered.AgentVersion = &v
	ongoing := newCall(g, "ws_1", b, data.DirectionOutbound, data.CallOngoing)
	started := data.NewTime(time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC))
	ongoing.StartedAt = &started
	ended := newCall(g, "ws_1", a, data.DirectionWeb, data.CallEnded)
	ended.EndedAt = &ended.CreatedAt
	other := newCall(g, "ws_2", a, data.DirectionWeb, data.CallRegistered)
	update(t, s, func(tx service.Tx) error {
		for _, c := range []*data.Call{registered, ongoing, ended, other} {
			if err := tx.InsertCall(c); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(tx service.Tx) error {
		got, err := tx.OpenCalls("ws_1")
		if err != nil {
			return err
		}
		if ids := openIDs(got); !slices.Equal(ids, []string{registered.ID, ongoing.ID}) {
			t.Fatalf("open calls %v, want the registered and the ongoing one", ids)
		}
		for _, o := range got {
			switch o.ID {
			case registered.ID:
				if o.AgentID != a || o.AgentVersion == nil || *o.AgentVersion != 3 || !o.Since.Equal(registered.CreatedAt.Time) {
					t.Errorf("registered: %+v (version %v), want agent %s version 3 since its creation", o, o.AgentVersion, a)
				}
			case ongoing.ID:
				if o.AgentID != b || o.AgentVersion != nil || !o.Since.Equal(started.Time) {
					t.Errorf("ongoing: %+v, want agent %s, no version, since its start", o, b)
				}
			}
		}
		return nil
	})
	// Ending one, starting the other, deleting a third: the index follows.
	fin := *registered
	fin.Status, fin.EndedAt = data.CallFailed, &fin.CreatedAt
	later := data.NewTime(started.Add(time.Minute))
	moved := *ongoing
	moved.StartedAt = &later
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutCall(&fin); err != nil {
			return err
		}
		return tx.PutCall(&moved)
	})
	view(t, s, func(tx service.Tx) error {
		got, err := tx.OpenCalls("ws_1")
		if ids := openIDs(got); err != nil || !slices.Equal(ids, []string{ongoing.ID}) || !got[0].Since.Equal(later.Time) {
			t.Errorf("after the updates: %+v, %v; want the ongoing call since %v", got, err, later)
		}
		return err
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteCall(ongoing.ID, nil) })
	view(t, s, func(tx service.Tx) error {
		got, err := tx.OpenCalls("ws_1")
		if len(got) != 0 || err != nil {
			t.Errorf("after the delete: %+v, %v", got, err)
		}
		mine, err := tx.OpenCalls("ws_2")
		if ids := openIDs(mine); !slices.Equal(ids, []string{other.ID}) {
			t.Errorf("another workspace's open calls: %v", ids)
		}
		return err
	})
}

// testRollouts: one rollout per agent, stored whole with its slot map (or none: nil),
// replaced, deleted, and gone with its agent's or workspace's delete.
func testRollouts(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	at := data.NewTime(time.Date(2026, 11, 20, 9, 0, 0, 123_000_000, time.UTC))
	// A map no layout rule would give: each slot's version is its own to keep.
	slots := make([]int, data.RolloutSlots)
	for i := range slots {
		slots[i] = 1
		if i%10 == 3 {
			slots[i] = 70_000 // past a smallint
		}
	}
	r := &data.StoredRollout{Rollout: data.Rollout{AgentID: g.New(data.PrefixAgent), WorkspaceID: "ws_1", StartedAt: at, UpdatedAt: at,
		Variants: []data.RolloutVariant{{Version: 1, Weight: 90, RolloutFigures: data.RolloutFigures{Calls: 7, Failed: 1}},
			{Version: 70_000, Weight: 10, RolledBack: true}},
		Rollback: &data.RolloutRollback{Metric: data.MetricFailedRate, Threshold: 0.2, MinCalls: 5}}, Slots: slots}
	// Stored without a map, as before maps existed.
	other := &data.StoredRollout{Rollout: data.Rollout{AgentID: g.New(data.PrefixAgent), WorkspaceID: "ws_2", StartedAt: at, UpdatedAt: at,
		Variants: []data.RolloutVariant{{Version: 1, Weight: 100}}}}
	view(t, s, func(tx service.Tx) error {
		got, err := tx.Rollout(r.AgentID)
		if got != nil {
			t.Errorf("a rollout before any: %+v", got)
		}
		return err
	})
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutRollout(r); err != nil {
			return err
		}
		return tx.PutRollout(other)
	})
	view(t, s, func(tx service.Tx) error {
		got, err := tx.Rollout(r.AgentID)
		if err != nil || got == nil || !sameJSON(got, r) || !slices.Equal(got.Slots, slots) {
			t.Fatalf("Rollout = %+v, %v; want %+v", got, err, r)
		}
		if got, err := tx.Rollout(other.AgentID); err != nil || got == nil || got.Slots != nil || !sameJSON(got, other) {
			t.Fatalf("a rollout stored without a map: %+v, %v", got, err)
		}
		return nil
	})
	r.Variants[0].Weight, r.Variants[1].Weight = 100, 0
	moved := slices.Repeat([]int{1}, data.RolloutSlots)
	r.Slots = moved
	update(t, s, func(tx service.Tx) error { return tx.PutRollout(r) })
	view(t, s, func(tx service.Tx) error {
		got, err := tx.Rollout(r.AgentID)
		if err != nil || got == nil || got.Variants[0].Weight != 100 || !slices.Equal(got.Slots, moved) {
			t.Errorf("after the replace: %+v, %v", got, err)
		}
		return err
	})
	// A map given, then taken away: storage keeps what it is given.
	other.Slots = slices.Repeat([]int{1}, data.RolloutSlots)
	update(t, s, func(tx service.Tx) error { return tx.PutRollout(other) })
	other.Slots = nil
	update(t, s, func(tx service.Tx) error { return tx.PutRollout(other) })
	view(t, s, func(tx service.Tx) error {
		got, err := tx.Rollout(other.AgentID)
		if err != nil || got == nil || got.Slots != nil {
			t.Errorf("a map replaced by none: %+v, %v", got, err)
		}
		return err
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteRollout(r.AgentID) })
	update(t, s, func(tx service.Tx) error { return tx.DeleteRollout(r.AgentID) }) // none: no error
	view(t, s, func(tx service.Tx) error {
		got, err := tx.Rollout(r.AgentID)
		if got != nil {
			t.Errorf("a deleted rollout reads %+v", got)
		}
		return err
	})

	// An agent's delete and a workspace's delete take their rollouts along.
	agent := &data.StoredAgent{Agent: data.Agent{ID: other.AgentID, WorkspaceID: "ws_2", Name: "a", Status: data.AgentStatusDraft}}
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutAgent(agent, ""); err != nil {
			return err
		}
		return tx.DeleteAgent(agent)
	})
	r.WorkspaceID = "ws_3"
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: "ws_3", Name: "W"}}); err != nil {
			return err
		}
		if err := tx.PutRollout(r); err != nil {
			return err
		}
		return tx.DeleteWorkspace("ws_3")
	})
	view(t, s, func(tx service.Tx) error {
		for _, id := range []string{other.AgentID, r.AgentID} {
			if got, err := tx.Rollout(id); got != nil || err != nil {
				t.Errorf("rollout of %s after its agent's or workspace's delete: %+v, %v", id, got, err)
			}
		}
		return nil
	})
}

// testNumberByPhone: a number is found by its phone number across workspaces; an
// unknown one is nil; a deleted one is gone; variables come back as stored.
func testNumberByPhone(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	n := &data.Number{ID: g.New(data.PrefixNumber), WorkspaceID: "ws_1", PhoneNumber: "+15550101", Provider: "sip",
		Variables: map[string]any{"plan": "gold", "seats": 3.0, "vip": true}}
	update(t, s, func(tx service.Tx) error {
		_, err := tx.InsertNumber(n)
		return err
	})
	view(t, s, func(tx service.Tx) error {
		got, err := tx.NumberByPhone("+15550101")
		if err != nil || got == nil || got.ID != n.ID || got.WorkspaceID != "ws_1" || !sameJSON(got.Variables, n.Variables) {
			t.Errorf("NumberByPhone = %+v, %v", got, err)
		}
		if none, err := tx.NumberByPhone("+15550199"); none != nil || err != nil {
			t.Errorf("an unknown phone = %+v, %v", none, err)
		}
		return nil
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteNumber(n.ID) })
	view(t, s, func(tx service.Tx) error {
		got, err := tx.NumberByPhone("+15550101")
		if got != nil {
			t.Errorf("a deleted number is found: %+v", got)
		}
		return err
	})
}
