package service

import (
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// callers are n simulated callers' numbers.
func callers(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("+1555%07d", i)
	}
	return out
}

// rolloutOf is a new rollout of versions 1, 2, … with these weights, its slots laid out
// as SetRollout lays out a new one's.
func rolloutOf(started time.Time, weights ...int) *data.StoredRollout {
	r := &data.StoredRollout{Rollout: data.Rollout{AgentID: "agt_01JD6Q0000000000000000000A", StartedAt: data.NewTime(started)}}
	for i, w := range weights {
		r.Variants = append(r.Variants, data.RolloutVariant{Version: i + 1, Weight: w})
	}
	r.Slots = nextSlots(nil, r.Variants)
	return r
}

// reweighed is r after a PUT of the same versions with these weights, as SetRollout
// builds it.
func reweighed(r *data.StoredRollout, weights ...int) *data.StoredRollout {
	next := &data.StoredRollout{Rollout: r.Rollout}
	next.Variants = nil
	for i, w := range weights {
		next.Variants = append(next.Variants, data.RolloutVariant{Version: i + 1, Weight: w})
	}
	next.Slots = nextSlots(r, next.Variants)
	return next
}

// TestVariantWeightsAndStickiness: 10,000 simulated callers split within ±2 points of each
// variant's weight, and each caller gets the same variant every time while the rollout
// stands.
func TestVariantWeightsAndStickiness(t *testing.T) {
	people := callers(10_000)
	started := time.Date(2026, 11, 21, 10, 4, 5, 123_000_000, time.UTC)
	for _, weights := range [][]int{{50, 50}, {90, 10}, {50, 30, 20}, {1, 99}, {0, 100}, {34, 33, 33}} {
		r := rolloutOf(started, weights...)
		counts := map[int]int{}
		first := map[string]int{}
		for _, p := range people {
			v := variantFor(r, p).Version
			counts[v]++
			first[p] = v
		}
		for i, w := range weights {
			share := 100 * float64(counts[i+1]) / float64(len(people))
			if share < float64(w)-2 || share > float64(w)+2 {
				t.Errorf("weights %v: variant %d got %.2f%% of the callers, want %d%% ± 2", weights, i+1, share, w)
			}
		}
		for round := range 3 {
			for _, p := range people {
				if v := variantFor(r, p).Version; v != first[p] {
					t.Fatalf("weights %v, round %d: caller %s got variant %d, then %d", weights, round, p, first[p], v)
				}
			}
		}
	}
}

// TestVariantRampMovesOnlyIntoTheRaisedVariant: raising a canary from 10 to 30 moves
// callers from the stable version into the canary and none the other way; a rollout
// started anew shuffles them.
func TestVariantRampMovesOnlyIntoTheRaisedVariant(t *testing.T) {
	people := callers(10_000)
	started := time.Date(2026, 11, 21, 10, 4, 5, 0, time.UTC)
	before := rolloutOf(started, 90, 10)
	after := reweighed(before, 70, 30)
	moved := 0
	for _, p := range people {
		a, b := variantFor(before, p).Version, variantFor(after, p).Version
		if a == 2 && b != 2 {
			t.Fatalf("caller %s left the canary when it grew", p)
		}
		if a != b {
			moved++
		}
	}
	if moved < 1500 || moved > 2500 {
		t.Errorf("%d callers moved into the canary, want about 2,000", moved)
	}
	anew := rolloutOf(started.Add(time.Second), 90, 10)
	changed := 0
	for _, p := range people {
		if variantFor(before, p).Version != variantFor(anew, p).Version {
			changed++
		}
	}
	if changed < 1000 {
		t.Errorf("a new rollout kept %d of 10,000 callers where they were: the start must salt the assignment", 10_000-changed)
	}
}

// TestRollBackRule: the rule's edges, as a table.
func TestRollBackRule(t *testing.T) {
	fig := func(calls, failed, analyzed, ok int64) data.RolloutFigures {
		return data.RolloutFigures{Calls: calls, Failed: failed, Analyzed: analyzed, Successful: ok}
	}
	failed := &data.RolloutRollback{Metric: data.MetricFailedRate, Threshold: 0.2, MinCalls: 10}
	success := &data.RolloutRollback{Metric: data.MetricSuccessRate, Threshold: 0.8, MinCalls: 10}
	cases := []struct {
		name    string
		rb      *data.RolloutRollback
		figs    []data.RolloutFigures
		weights []int
		want    []int // weights after; nil: unchanged
	}{
		{"no rollback configured", nil, []data.RolloutFigures{fig(100, 0, 0, 0), fig(100, 100, 0, 0)}, []int{50, 50}, nil},
		{"loser past the threshold", failed, []data.RolloutFigures{fig(10, 1, 0, 0), fig(10, 3, 0, 0)}, []int{90, 10}, []int{100, 0}},
		{"at the threshold is within it", failed, []data.RolloutFigures{fig(10, 1, 0, 0), fig(10, 2, 0, 0)}, []int{90, 10}, nil},
		{"loser one call short of min_calls", failed, []data.RolloutFigures{fig(10, 0, 0, 0), fig(9, 9, 0, 0)}, []int{90, 10}, nil},
		{"winner one call short of min_calls", failed, []data.RolloutFigures{fig(9, 0, 0, 0), fig(10, 9, 0, 0)}, []int{90, 10}, nil},
		{"both past it: nowhere better", failed, []data.RolloutFigures{fig(10, 5, 0, 0), fig(10, 9, 0, 0)}, []int{50, 50}, nil},
		{"the stable version loses too", failed, []data.RolloutFigures{fig(10, 5, 0, 0), fig(10, 0, 0, 0)}, []int{90, 10}, []int{0, 100}},
		{"worst loses to best of three", failed, []data.RolloutFigures{fig(10, 1, 0, 0), fig(10, 0, 0, 0), fig(10, 9, 0, 0)}, []int{40, 30, 30}, []int{40, 60, 0}},
		{"a variant without weight is not judged", failed, []data.RolloutFigures{fig(10, 0, 0, 0), fig(10, 9, 0, 0)}, []int{100, 0}, nil},
		{"success rate below the threshold", success, []data.RolloutFigures{fig(0, 0, 10, 9), fig(0, 0, 10, 7)}, []int{80, 20}, []int{100, 0}},
		{"success rate counts analyzed calls only", success, []data.RolloutFigures{fig(50, 0, 10, 9), fig(50, 0, 9, 0)}, []int{80, 20}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rolloutOf(time.Now(), c.weights...)
			r.Rollback = c.rb
			for i := range r.Variants {
				r.Variants[i].RolloutFigures = c.figs[i]
			}
			rolled := rollBack(&r.Rollout)
			want := c.want
			if want == nil {
				want = c.weights
			}
			for i, v := range r.Variants {
				if v.Weight != want[i] || v.RolledBack != (c.want != nil && want[i] == 0 && c.weights[i] > 0) {
					t.Errorf("variant %d: weight %d rolled_back %v, want weight %d", v.Version, v.Weight, v.RolledBack, want[i])
				}
			}
			if rolled != (c.want != nil) {
				t.Errorf("rollBack = %v", rolled)
			}
		})
	}
}
