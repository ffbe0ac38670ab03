package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// threeVersions publishes e.agent twice more: versions 1, 2 and 3.
func (e *startEnv) threeVersions() {
	e.t.Helper()
	e.twoVersions()
	testkit.Expect(e.t, e.Do("PUT", "/api/v1/agents/"+e.agent, e.Owner.Token,
		map[string]any{"prompt_config": map[string]any{"welcome_message": "Good day {{customer_name}}!"}}), 200)
	testkit.Expect(e.t, e.Do("POST", "/api/v1/agents/"+e.agent+"/publish", e.Owner.Token, nil), 204)
}

// slotCallers are n callers' numbers, with a prefix of their own per test.
func slotCallers(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("+1%s%06d", prefix, i)
	}
	return out
}

// versionsOf starts a call for each caller and returns the version each got, and the
// calls' ids.
func (e *startEnv) versionsOf(people []string) (versions map[string]int, calls map[string]string) {
	e.t.Helper()
	versions, calls = map[string]int{}, map[string]string{}
	for _, p := range people {
		call, _, variant := answer(e.t, e.start(inbound(p, nil)))
		versions[p] = int(variant["version"].(float64))
		calls[p] = call["id"].(string)
	}
	return versions, calls
}

// checkMoves fails unless every caller's change of version between before and after is
// one allowed names (from → to), and returns how many moved.
func checkMoves(t *testing.T, before, after map[string]int, allowed map[[2]int]bool) int {
	t.Helper()
	moved := 0
	for p, from := range before {
		if to := after[p]; to != from {
			moved++
			if !allowed[[2]int{from, to}] {
				t.Errorf("caller %s went from version %d to %d", p, from, to)
			}
		}
	}
	return moved
}

// Moving weight between variants that are not neighbours in the list moves only the
// callers of the one that gave, to the one that took: version 2, between them, keeps
// every caller (before the slot map, its range shifted and some of its callers moved).
// The rollout's answer shows no slot map.
func TestRolloutKeepsCallersAcrossANonNeighbourChange(t *testing.T) {
	e := newStartEnv(t)
	e.threeVersions()
	shown := e.rollout(map[string]any{"variants": variants(40, 30, 30)})
	if _, ok := shown["slots"]; ok {
		t.Errorf("the rollout shows its slot map: %v", shown)
	}
	people := slotCallers("555", 120)
	before, _ := e.versionsOf(people)
	shown = e.rollout(map[string]any{"variants": variants(20, 30, 50)})
	if _, ok := shown["slots"]; ok {
		t.Errorf("the rollout shows its slot map: %v", shown)
	}
	after, _ := e.versionsOf(people)
	// About half of version 1's 48 callers move; none moving is a chance of 2^-48.
	if moved := checkMoves(t, before, after, map[[2]int]bool{{1, 3}: true}); moved == 0 {
		t.Errorf("no caller moved from version 1 to 3: %v", after)
	}
	// And back, between the two: still only they trade callers.
	e.rollout(map[string]any{"variants": variants(50, 30, 20)})
	back, _ := e.versionsOf(people)
	checkMoves(t, after, back, map[[2]int]bool{{3, 1}: true})
	// Nor do the events show the map.
	events := e.Do("GET", "/api/v1/audit-log?type="+data.EventRolloutUpdated, e.Owner.Token, nil).List()
	if len(events) != 3 {
		t.Fatalf("%d rollout_updated events, want 3", len(events))
	}
	for _, ev := range events {
		if d, ok := ev.(map[string]any)["data"].(map[string]any); !ok || d["variants"] == nil || d["slots"] != nil {
			t.Errorf("a rollout_updated event's data: %v", ev)
		}
	}
}

// The automatic rollback to a winner that is not the loser's neighbour moves only the
// loser's callers, to the winner; version 2, between them, keeps every caller.
func TestRolloutRollsBackToANonNeighbour(t *testing.T) {
	e := newStartEnv(t)
	e.threeVersions()
	e.rollout(map[string]any{"variants": variants(40, 20, 40), "rollback": map[string]any{"metric": "failed_rate", "threshold": 0.3, "min_calls": 3}})
	people := slotCallers("556", 120)
	before, calls := e.versionsOf(people)
	// Version 1's calls end well, then version 3's fail; version 2's stay open, so it is
	// never judged and the winner is version 1.
	ended := map[int]int{}
	for _, v := range []int{1, 3} {
		for _, p := range people {
			if before[p] == v && ended[v] < 3 {
				e.endAs(calls[p], map[int]string{1: "ended", 3: "failed"}[v], nil)
				ended[v]++
			}
		}
	}
	r := e.rolloutNow().Data()
	weights := []any{}
	for _, v := range r["variants"].([]any) {
		weights = append(weights, v.(map[string]any)["weight"])
	}
	if fmt.Sprint(weights) != "[80 20 0]" {
		t.Fatalf("after the rollback the weights are %v: %v", weights, r)
	}
	after, _ := e.versionsOf(people)
	checkMoves(t, before, after, map[[2]int]bool{{3, 1}: true})
	for p, v := range after {
		if v == 3 {
			t.Errorf("caller %s still gets the rolled back version", p)
		}
	}
}

// A rollout stored before the slot map (written through storage without one) sends
// every caller where the consecutive layout did, so upgrading moves no one; the next PUT
// moves only the callers of what shrank.
func TestRolloutStoredWithoutSlotsKeepsCallers(t *testing.T) {
	e := newStartEnv(t)
	e.threeVersions()
	e.rollout(map[string]any{"variants": variants(40, 30, 30)}) // a new rollout: consecutive
	people := slotCallers("557", 120)
	before, _ := e.versionsOf(people)
	ctx := context.Background()
	if err := e.Store.Update(ctx, func(tx service.Tx) error {
		r, err := tx.Rollout(e.agent)
		if err != nil {
			return err
		}
		r.Slots = nil
		return tx.PutRollout(r)
	}); err != nil {
		t.Fatal(err)
	}
	stored, _ := e.versionsOf(people)
	checkMoves(t, before, stored, nil)
	e.rollout(map[string]any{"variants": variants(20, 30, 50)})
	after, _ := e.versionsOf(people)
	checkMoves(t, stored, after, map[[2]int]bool{{1, 3}: true})
	if err := e.Store.View(ctx, func(tx service.Tx) error {
		r, err := tx.Rollout(e.agent)
		if err == nil && len(r.Slots) != data.RolloutSlots {
			t.Errorf("the PUT after the upgrade stored the map %v", r.Slots)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
