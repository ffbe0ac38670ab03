package service

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// fuzzWeights turns arbitrary bytes into 1 to validate.MaxRolloutVariants weights that
// validation accepts: integers from 0 summing to 100. Each byte is a share of what is
// left; the last variant takes the rest.
func fuzzWeights(b []byte) []int {
	n := 1 + len(b)%validate.MaxRolloutVariants
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
// a variant of weight 0, and moving weight from a variant to its neighbour in the list
// (how a ramp, or a rollback between neighbours, changes a rollout that stands) moves
// callers only from the one that gave to the one that took. Shares against weights are
// TestVariantWeightsAndStickiness's (statistical, over 10,000 callers).
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
		if err := validate.Rollout(rolloutSetOf(r)); err != nil {
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
		// The giver and the taker are neighbours, either way round.
		i := int(giver) % len(weights)
		j := i + 1
		if j == len(weights) || giver >= 128 && i > 0 {
			j = i - 1
		}
		moved := min(int(amount), weights[i])
		ramped := rolloutOf(started, weights...)
		ramped.AgentID = agentID
		ramped.Variants[i].Weight -= moved
		ramped.Variants[j].Weight += moved
		if w := variantFor(ramped, party); w.Version != v.Version && (v.Version != i+1 || w.Version != j+1) {
			t.Fatalf("weights %v, %d moved from variant %d to %d: %q went from %d to %d", weights, moved, i+1, j+1, party, v.Version, w.Version)
		}
	})
}

// rolloutSetOf is the body that sets r.
func rolloutSetOf(r *data.Rollout) data.RolloutSet {
	var in data.RolloutSet
	for _, v := range r.Variants {
		in.Variants = append(in.Variants, data.RolloutVariantSet{Version: v.Version, Weight: v.Weight})
	}
	return in
}
