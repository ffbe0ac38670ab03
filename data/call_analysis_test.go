package data

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestSketchQuantilesWithinOnePercent compares the sketch's p50 and p90 with the exact
// nearest-rank percentiles of value sets of several shapes and signs.
func TestSketchQuantilesWithinOnePercent(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	sets := map[string]func() float64{
		"uniform 1-10":     func() float64 { return 1 + 9*r.Float64() },
		"lognormal":        func() float64 { return math.Exp(r.NormFloat64() * 2) },
		"small integers":   func() float64 { return float64(r.IntN(8)) },
		"negative and all": func() float64 { return r.NormFloat64() * 100 },
		"one value":        func() float64 { return 42 },
	}
	for name, gen := range sets {
		sketch := map[string]int64{}
		values := make([]float64, 10_000)
		for i := range values {
			values[i] = gen()
			sketch[SketchKey(values[i])]++
		}
		slices.Sort(values)
		got := SketchQuantiles(sketch, 0.5, 0.9)
		for i, q := range []float64{0.5, 0.9} {
			exact := values[int(math.Ceil(q*float64(len(values))))-1]
			if diff := math.Abs(got[i] - exact); diff > 0.01*math.Abs(exact)+1e-9 {
				t.Errorf("%s p%v = %v, exact %v: off by %.3f%%", name, q*100, got[i], exact, 100*diff/math.Abs(exact))
			}
		}
	}
	if SketchQuantiles(map[string]int64{}, 0.5) != nil {
		t.Error("an empty sketch has quantiles")
	}
}

func TestValuesOfTypesByTheFields(t *testing.T) {
	v3 := 3
	c := &Call{AgentID: "agt_1", AgentVersion: &v3, CreatedAt: NewTime(time.Date(2026, 3, 1, 10, 42, 0, 0, time.UTC)),
		Analysis: map[string]any{"outcome": "booked", "guests": 4.0, "vip": false, "day": "2026-03-02", "note": "x",
			"undeclared": 1.0, "skipped": nil, "call_successful": true, "summary": "A booking."}}
	cfg := &AnalysisConfig{Fields: []AnalysisField{
		{Name: "outcome", Type: AnalysisEnum, Choices: []string{"booked"}}, {Name: "guests", Type: AnalysisNumber},
		{Name: "vip", Type: AnalysisBoolean}, {Name: "day", Type: AnalysisDate}, {Name: "note", Type: AnalysisString},
		{Name: "skipped", Type: AnalysisString}, {Name: "absent", Type: AnalysisNumber},
	}}
	v := ValuesOf(c, cfg)
	four := 4.0
	want := []FieldValue{{Field: "outcome", Value: "booked"}, {Field: "guests", Number: &four}, {Field: "vip", Value: "false"},
		{Field: "day"}, {Field: "note"}, {Field: AnalysisKeySuccessful, Value: "true"}}
	if v.Version != 3 || !v.Hour.Equal(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)) || len(v.Fields) != len(want) {
		t.Fatalf("values = %+v", v)
	}
	for i, f := range want {
		g := v.Fields[i]
		if g.Field != f.Field || g.Value != f.Value || (g.Number == nil) != (f.Number == nil) || g.Number != nil && *g.Number != *f.Number {
			t.Errorf("field %d = %+v, want %+v", i, g, f)
		}
	}
	if ValuesOf(&Call{}, cfg) != nil || ValuesOf(&Call{Analysis: map[string]any{"x": 1.0}}, cfg) != nil {
		t.Error("a call with nothing to count has values")
	}
}

// TestSumFieldRollupsEdges: whole hours from one feed, the partial hours at the edges
// from the other, each counted once, by bucket and version.
func TestSumFieldRollupsEdges(t *testing.T) {
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	from, to := day.Add(8*time.Hour+30*time.Minute), day.Add(11*time.Hour+15*time.Minute)
	one := FieldRollup{Count: 1, Values: map[string]int64{"a": 1}}
	var wholeAsked, edgesAsked [][2]time.Time
	hours := func(f, t time.Time, fn func(time.Time, int, FieldRollup)) error {
		wholeAsked = append(wholeAsked, [2]time.Time{f, t})
		fn(day.Add(9*time.Hour), 1, one)
		fn(day.Add(10*time.Hour), 2, one)
		return nil
	}
	edges := func(f, t time.Time, fn func(time.Time, int, FieldRollup)) error {
		edgesAsked = append(edgesAsked, [2]time.Time{f, t})
		fn(f.Truncate(time.Hour), 1, one)
		return nil
	}
	got, err := SumFieldRollups(from, to, 24*time.Hour, hours, edges)
	if err != nil {
		t.Fatal(err)
	}
	if len(wholeAsked) != 1 || !wholeAsked[0][0].Equal(day.Add(9*time.Hour)) || !wholeAsked[0][1].Equal(day.Add(11*time.Hour)) {
		t.Errorf("whole hours asked %v", wholeAsked)
	}
	if len(edgesAsked) != 2 || !edgesAsked[0][0].Equal(from) || !edgesAsked[1][1].Equal(to) {
		t.Errorf("edges asked %v", edgesAsked)
	}
	if len(got) != 2 || got[0].Version != 1 || got[0].Count != 3 || got[1].Version != 2 || got[1].Count != 1 || !got[0].Start.Equal(day) {
		t.Errorf("buckets = %+v", got)
	}
}
