package service

import (
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// move is a caller's change of version: from, to.
type move [2]int

// movesOf counts, over callers, who went from which version to which between a and b.
func movesOf(a, b *data.StoredRollout, people []string) map[move]int {
	out := map[move]int{}
	for _, p := range people {
		if from, to := variantFor(a, p).Version, variantFor(b, p).Version; from != to {
			out[move{from, to}]++
		}
	}
	return out
}

// TestReslotMovesOnlyWhatShrank: a change of weights on a standing rollout, a PUT or the
// automatic rollback, moves exactly the slots the shrinking versions freed, to the
// versions that grew, whichever their places in the list; the callers of a version whose
// weight held keep it. Before the slot map, the first two cases moved callers of version
// 2, which was between the giver and the taker.
func TestReslotMovesOnlyWhatShrank(t *testing.T) {
	people := callers(10_000)
	started := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	v := func(version, weight int) data.RolloutVariant {
		return data.RolloutVariant{Version: version, Weight: weight}
	}
	cases := []struct {
		name   string
		before []data.RolloutVariant
		after  []data.RolloutVariant
		slots  map[move]int // slots moved, exactly
	}{
		{"weight moved between variants that are not neighbours", []data.RolloutVariant{v(1, 40), v(2, 30), v(3, 30)},
			[]data.RolloutVariant{v(1, 20), v(2, 30), v(3, 50)}, map[move]int{{1, 3}: 20}},
		{"a rollback from the last variant to the first", []data.RolloutVariant{v(1, 40), v(2, 20), v(3, 40)},
			[]data.RolloutVariant{v(1, 80), v(2, 20), v(3, 0)}, map[move]int{{3, 1}: 40}},
		{"neighbours, as a canary ramps", []data.RolloutVariant{v(1, 90), v(2, 10)},
			[]data.RolloutVariant{v(1, 70), v(2, 30)}, map[move]int{{1, 2}: 20}},
		{"a version removed from the middle", []data.RolloutVariant{v(1, 30), v(2, 40), v(3, 30)},
			[]data.RolloutVariant{v(1, 50), v(3, 50)}, map[move]int{{2, 1}: 20, {2, 3}: 20}},
		{"a version added first takes from the one that shrank", []data.RolloutVariant{v(1, 50), v(2, 50)},
			[]data.RolloutVariant{v(3, 10), v(1, 40), v(2, 50)}, map[move]int{{1, 3}: 10}},
		{"the list reordered moves no one", []data.RolloutVariant{v(1, 25), v(2, 25), v(3, 50)},
			[]data.RolloutVariant{v(3, 50), v(2, 25), v(1, 25)}, map[move]int{}},
		{"two shrink, two grow", []data.RolloutVariant{v(1, 40), v(2, 10), v(3, 40), v(4, 10)},
			[]data.RolloutVariant{v(1, 30), v(2, 20), v(3, 20), v(4, 30)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := &data.StoredRollout{Rollout: data.Rollout{AgentID: "agt_01JD6Q0000000000000000000A", StartedAt: data.NewTime(started), Variants: c.before}}
			before.Slots = nextSlots(nil, before.Variants)
			after := &data.StoredRollout{Rollout: before.Rollout}
			after.Variants = c.after
			after.Slots = nextSlots(before, after.Variants)
			checkShares(t, after)
			slots := map[move]int{}
			for i := range before.Slots {
				if from, to := before.Slots[i], after.Slots[i]; from != to {
					slots[move{from, to}]++
				}
			}
			if c.slots != nil && !maps.Equal(slots, c.slots) {
				t.Errorf("slots moved %v, want %v", slots, c.slots)
			}
			weight := func(vs []data.RolloutVariant, version int) int {
				if i := variantIndex(&data.Rollout{Variants: vs}, version); i >= 0 {
					return vs[i].Weight
				}
				return 0
			}
			for m, n := range movesOf(before, after, people) {
				if weight(c.after, m[0]) >= weight(c.before, m[0]) || weight(c.after, m[1]) <= weight(c.before, m[1]) {
					t.Errorf("%d callers went from version %d to %d: only a version that shrank gives, to one that grew", n, m[0], m[1])
				}
			}
			// Set again as it stands: no slot moves.
			if again := nextSlots(after, after.Variants); !maps.Equal(rolloutShares(again), rolloutShares(after.Slots)) || len(movesOf(after, &data.StoredRollout{Rollout: after.Rollout, Slots: again}, people)) != 0 {
				t.Errorf("the same weights set again moved callers")
			}
		})
	}
}

// consecutiveVariantFor is variantFor as it was before the slot map: the variants own
// consecutive ranges of the slots, in list order.
func consecutiveVariantFor(r *data.Rollout, party string) int {
	h := sha256.Sum256([]byte(r.AgentID + "\x00" + strconv.FormatInt(r.StartedAt.UnixMilli(), 10) + "\x00" + party))
	slot := binary.BigEndian.Uint64(h[:8]) % 100
	var upTo uint64
	for _, v := range r.Variants {
		upTo += uint64(v.Weight)
		if slot < upTo {
			return v.Version
		}
	}
	return r.Variants[len(r.Variants)-1].Version
}

// TestRolloutStoredWithoutSlotsReadsAsBefore: upgrading moves no caller. A rollout stored
// before the slot map (none), or rewritten by a binary without it (a map its weights no
// longer fit), sends every caller where the consecutive layout did; the next PUT starts
// from that layout, so only the callers of what shrank move then.
func TestRolloutStoredWithoutSlotsReadsAsBefore(t *testing.T) {
	people := callers(10_000)
	started := time.Date(2026, 11, 21, 10, 4, 5, 123_000_000, time.UTC)
	for _, weights := range [][]int{{50, 50}, {90, 10}, {50, 30, 20}, {1, 99}, {0, 100}, {34, 33, 33}, {10, 0, 20, 0, 30, 40}} {
		stored := rolloutOf(started, weights...)
		stored.Slots = nil
		// Every slot on version 1: a map none of these weights fits.
		stale := rolloutOf(started, weights...)
		stale.Slots = slices.Repeat([]int{1}, data.RolloutSlots)
		for _, p := range people {
			if got, want := variantFor(stored, p).Version, consecutiveVariantFor(&stored.Rollout, p); got != want {
				t.Fatalf("weights %v, no map: caller %s gets version %d, got %d before", weights, p, got, want)
			}
			if got, want := variantFor(stale, p).Version, consecutiveVariantFor(&stale.Rollout, p); got != want {
				t.Fatalf("weights %v, a map that does not fit: caller %s gets version %d, got %d before", weights, p, got, want)
			}
		}
	}
	// 40/30/30 stored without a map, then 20/30/50: version 2's callers stay.
	stored := rolloutOf(started, 40, 30, 30)
	stored.Slots = nil
	for m, n := range movesOf(stored, reweighed(stored, 20, 30, 50), people) {
		if m != (move{1, 3}) {
			t.Errorf("%d callers went from version %d to %d", n, m[0], m[1])
		}
	}
}
