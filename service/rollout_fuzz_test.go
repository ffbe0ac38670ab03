package service

import (
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// fuzzWeights turns arbitrary bytes into 1 to validate.MaxRolloutVariants weights that
// validation accepts (fuzzWeightsN).
func fuzzWeights(b []byte) []int { return fuzzWeightsN(1+len(b)%validate.MaxRolloutVariants, b) }

// fuzzWeightsN turns arbitrary bytes into n weights that validation accepts: integers from
// 0 summing to 100. Each byte is a share of what is left; the last variant takes the rest.
func fuzzWeightsN(n int, b []byte) []int {
	weights := make([]int, n)
	left := 100
	for i := range n - 1 {
		share := 0
		if i < len(b) {
			share = int(b[i]) % (left + 1)
		}
		weights[i], left = share, left-share
	}
	weights[n-1] = left
	return weights
}

// FuzzVariantFor: the variant a party gets (conventions §23) is a pure function of the
// rollout and the party (the same answer for a copy of the rollout, every time), is never
// a variant of weight 0, and moving weight from any variant to any other (how a ramp, or
// a rollback, changes a rollout that stands), neighbours in the list or not, moves
// callers only from the one that gave to the one that took. Shares against weights are
// TestVariantWeightsAndStickiness's (statistical, over 10,000 callers); sequences of
// changes, FuzzRolloutSlots's.
func FuzzVariantFor(f *testing.F) {
	f.Add("agt_01JD6Q0000000000000000000A", int64(1795773845123), "+15550000001", []byte{50}, uint8(0), uint8(20))
	f.Add("agt_01JD6Q0000000000000000000A", int64(1795773845000), "+15550000002", []byte{90, 0}, uint8(1), uint8(30))
	f.Add("agt_01JD6Q0000000000000000000B", int64(0), "call_01JD6Q0000000000000000000C", []byte{50, 30, 0}, uint8(2), uint8(100))
	f.Add("", int64(-1), "", []byte{0, 0, 0, 0}, uint8(3), uint8(1))
	f.Add("agt_x", int64(1), "+15550000003", []byte{34, 33, 33, 1, 2}, uint8(255), uint8(255))
	f.Fuzz(func(t *testing.T, agentID string, startedMilli int64, party string, shares []byte, giver, amount uint8) {
		weights := fuzzWeights(shares)
		started := time.UnixMilli(startedMilli)
		r := rolloutOf(started, weights...)
		r.AgentID = agentID
		if err := validate.Rollout(rolloutSetOf(&r.Rollout)); err != nil {
			t.Fatalf("weights %v: %v", weights, err)
		}
		v := variantFor(r, party)
		if v.Weight == 0 {
			t.Fatalf("weights %v: %q got variant %d of weight 0", weights, party, v.Version)
		}
		again := rolloutOf(started, weights...)
		again.AgentID = agentID
		if w := variantFor(again, party); w.Version != v.Version || variantFor(r, party).Version != v.Version {
			t.Fatalf("weights %v: %q got variant %d, then %d", weights, party, v.Version, w.Version)
		}
		if len(weights) < 2 {
			return
		}
		// Any giver, any other taker: the taker is the giver's i-th successor, round the list.
		i := int(giver) % len(weights)
		j := (i + 1 + int(amount)%(len(weights)-1)) % len(weights)
		moved := min(int(amount), weights[i])
		ramped := slices.Clone(weights)
		ramped[i] -= moved
		ramped[j] += moved
		if w := variantFor(reweighed(r, ramped...), party); w.Version != v.Version && (v.Version != i+1 || w.Version != j+1) {
			t.Fatalf("weights %v, %d moved from variant %d to %d: %q went from %d to %d", weights, moved, i+1, j+1, party, v.Version, w.Version)
		}
	})
}

// fuzzVariants turns the head of b into the variants of one PUT: 1 to
// validate.MaxRolloutVariants distinct versions out of 1 to 15 (so a sequence of them
// adds and removes versions), with weights validation accepts. It returns what is left
// of b.
func fuzzVariants(b []byte) ([]data.RolloutVariant, []byte) {
	take := func() byte {
		if len(b) == 0 {
			return 0
		}
		c := b[0]
		b = b[1:]
		return c
	}
	n := 1 + int(take())%validate.MaxRolloutVariants
	var variants []data.RolloutVariant
	seen := map[int]bool{}
	for range n {
		version := 1 + int(take())%15
		for seen[version] {
			version = 1 + version%15
		}
		seen[version] = true
		variants = append(variants, data.RolloutVariant{Version: version})
	}
	shares := make([]byte, n-1)
	for k := range shares {
		shares[k] = take()
	}
	for k, w := range fuzzWeightsN(n, shares) {
		variants[k].Weight = w
	}
	return variants, b
}

// FuzzRolloutSlots: over any sequence of PUTs on a standing rollout (2 to 10 variants or
// fewer, versions added and removed, weights moved between any of them), each version
// holds exactly its weight of the 100 slots, so of the callers; a slot (so each caller
// hashed to it) changes version only when its version's weight decreased or the version
// left the list; and no more slots move than the weights freed, so none move needlessly.
func FuzzRolloutSlots(f *testing.F) {
	// Each PUT: the count of variants less one, their versions less one, the weights but
	// the last (fuzzVariants).
	f.Add([]byte{1, 0, 1, 90, 1, 0, 1, 50})
	// Three variants, weight moved between the two that are not neighbours: 40/30/30 to
	// 20/30/50.
	f.Add([]byte{2, 0, 1, 2, 40, 30, 2, 0, 1, 2, 20, 30})
	// A version added, one removed, then everything on one.
	f.Add([]byte{1, 0, 1, 50, 2, 0, 1, 2, 20, 20, 1, 1, 2, 50, 0, 2})
	// Ten variants, then the weights turned round.
	f.Add([]byte{9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9,
		9, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 19, 17, 15, 13, 11, 9, 7, 5, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		variants, b := fuzzVariants(b)
		r := &data.StoredRollout{Rollout: data.Rollout{Variants: variants}}
		r.Slots = nextSlots(nil, variants)
		checkShares(t, r)
		for step := 0; len(b) > 0 && step < 50; step++ {
			var next []data.RolloutVariant
			next, b = fuzzVariants(b)
			if err := validate.Rollout(rolloutSetOf(&data.Rollout{Variants: next})); err != nil {
				t.Fatalf("step %d, variants %v: %v", step, next, err)
			}
			weightOf := func(vs []data.RolloutVariant, version int) int {
				if i := slices.IndexFunc(vs, func(v data.RolloutVariant) bool { return v.Version == version }); i >= 0 {
					return vs[i].Weight
				}
				return 0 // left the list
			}
			prev := slotsOf(r)
			r = &data.StoredRollout{Rollout: data.Rollout{Variants: next}, Slots: nextSlots(r, next)}
			checkShares(t, r)
			moved, freed := 0, 0
			for slot, was := range prev {
				now := r.Slots[slot]
				if now == was {
					continue
				}
				moved++
				if weightOf(next, was) >= rolloutShares(prev)[was] {
					t.Fatalf("step %d, to %v: slot %d went from version %d to %d, whose weight did not fall", step, next, slot, was, now)
				}
			}
			for version, held := range rolloutShares(prev) {
				freed += max(0, held-weightOf(next, version))
			}
			if moved != freed {
				t.Fatalf("step %d, to %v: %d slots moved, %d freed", step, next, moved, freed)
			}
		}
	})
}

// rolloutShares counts the slots each version holds.
func rolloutShares(slots []int) map[int]int {
	held := map[int]int{}
	for _, version := range slots {
		held[version]++
	}
	return held
}

// checkShares fails unless r's map gives each variant exactly its weight of the slots,
// and names no other version.
func checkShares(t *testing.T, r *data.StoredRollout) {
	t.Helper()
	if len(r.Slots) != data.RolloutSlots {
		t.Fatalf("variants %v: %d slots", r.Variants, len(r.Slots))
	}
	held := rolloutShares(r.Slots)
	for _, v := range r.Variants {
		if held[v.Version] != v.Weight {
			t.Fatalf("variants %v: version %d holds %d slots, its weight is %d", r.Variants, v.Version, held[v.Version], v.Weight)
		}
		delete(held, v.Version)
	}
	for version := range held {
		if held[version] > 0 {
			t.Fatalf("variants %v: version %d, not listed, holds %d slots", r.Variants, version, held[version])
		}
	}
}

// rolloutSetOf is the body that sets r.
func rolloutSetOf(r *data.Rollout) data.RolloutSet {
	var in data.RolloutSet
	for _, v := range r.Variants {
		in.Variants = append(in.Variants, data.RolloutVariantSet{Version: v.Version, Weight: v.Weight})
	}
	return in
}
