package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func testPriceTables(t *testing.T, open Opener) {
	s := open(t)
	at := data.NewTime(time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC))
	want := &data.PriceTable{Currency: "EUR", UpdatedAt: &at, Prices: []data.Price{
		{Provider: "groq", Model: "llama-3.3-70b-versatile", Unit: data.UnitLLMInput, Price: 590_000},
		{Provider: "twilio", Model: data.AnyModel, Unit: data.UnitPhoneMinute, Price: 14_000},
	}}
	update(t, s, func(tx service.Tx) error {
		if p, err := tx.PriceTable("ws_1"); err != nil || p != nil {
			t.Fatalf("a table nobody set = %+v, %v", p, err)
		}
		return tx.PutPriceTable("ws_1", want)
	})
	view(t, s, func(tx service.Tx) error {
		got, err := tx.PriceTable("ws_1")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("price table = %+v, %v; want %+v", got, err, want)
		}
		other, err := tx.PriceTable("ws_2")
		if other != nil || err != nil {
			t.Errorf("another workspace's table = %+v, %v", other, err)
		}
		return nil
	})
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace("ws_1") })
	view(t, s, func(tx service.Tx) error {
		if p, err := tx.PriceTable("ws_1"); p != nil || err != nil {
			t.Errorf("a deleted workspace's table = %+v, %v", p, err)
		}
		return nil
	})
}

func number(f float64) *float64 { return &f }

// valuesOf are a call's analysis values: outcome, and a score when score is not nil.
func valuesOf(c *data.Call, version int, outcome string, score *float64) *data.AnalysisValues {
	v := &data.AnalysisValues{AgentID: c.AgentID, Version: version, Hour: c.CreatedAt.Truncate(time.Hour),
		Fields: []data.FieldValue{{Field: "outcome", Value: outcome}}}
	if score != nil {
		v.Fields = append(v.Fields, data.FieldValue{Field: "score", Number: score})
	}
	return v
}

// testFieldRollups: values set, replaced and cleared move the rollups exactly; whole
// hours and the partial hours at the edges add up alike; versions stay apart; deletes
// (of a call, of a workspace) take a call's contribution back.
func testFieldRollups(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	agent, other := g.New(data.PrefixAgent), g.New(data.PrefixAgent)
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	calls := seedFieldRollups(t, s, g, agent, other, day)
	checkFieldRollups(t, s, agent, day)
	checkFieldRollupsTakenBack(t, s, calls, agent, day)
	update(t, s, func(tx service.Tx) error { return tx.DeleteWorkspace("ws_1") })
	view(t, s, func(tx service.Tx) error {
		for _, a := range []string{agent, other} {
			if left, _ := tx.FieldRollups("ws_1", a, "outcome", day, day.Add(24*time.Hour), time.Hour); len(left) != 0 {
				t.Errorf("a deleted workspace's buckets = %+v", left)
			}
		}
		return nil
	})
}

// seedFieldRollups stores four analysed calls of agent on day (08:00, 08:10, 09:30 and
// 10:15; versions 1, 1, 2, 2) and one of other at 08:20, and returns agent's calls.
func seedFieldRollups(t *testing.T, s service.Store, g *data.IDGen, agent, other string, day time.Time) []*data.Call {
	t.Helper()
	var calls []*data.Call
	for i, at := range []time.Duration{8 * time.Hour, 8*time.Hour + 10*time.Minute, 9*time.Hour + 30*time.Minute, 10*time.Hour + 15*time.Minute} {
		g.Now = func() time.Time { return day.Add(at + time.Duration(i)*time.Millisecond) }
		calls = append(calls, newCall(g, "ws_1", agent, data.DirectionWeb, data.CallEnded))
	}
	g.Now = func() time.Time { return day.Add(8*time.Hour + 20*time.Minute) }
	elsewhere := newCall(g, "ws_1", other, data.DirectionWeb, data.CallEnded)
	update(t, s, func(tx service.Tx) error {
		for _, c := range append(calls, elsewhere) {
			if err := tx.InsertCall(c); err != nil {
				return err
			}
		}
		for i, v := range []*data.AnalysisValues{
			valuesOf(calls[0], 1, "booked", number(4)),
			valuesOf(calls[1], 1, "declined", number(2)),
			valuesOf(calls[2], 2, "booked", nil),
			valuesOf(calls[3], 2, "booked", number(5)),
		} {
			if err := tx.SetCallAnalysisValues(calls[i], v); err != nil {
				return err
			}
		}
		return tx.SetCallAnalysisValues(elsewhere, valuesOf(elsewhere, 1, "booked", number(100)))
	})
	return calls
}

// sumFieldBuckets adds up buckets: their counts, values, numbers and sums.
func sumFieldBuckets(buckets []data.FieldBucket) (n int64, values map[string]int64, numbers int64, total float64) {
	values = map[string]int64{}
	for _, b := range buckets {
		n += b.Count
		for k, v := range b.Values {
			values[k] += v
		}
		numbers += b.Numbers
		total += b.Sum
	}
	return
}

// checkFieldRollups reads the outcome and score buckets of agent by hour and by day,
// per version, and none for another workspace.
func checkFieldRollups(t *testing.T, s service.Store, agent string, day time.Time) {
	t.Helper()
	view(t, s, func(tx service.Tx) error {
		// By hour over a range cutting the 08:00 and 10:00 hours: 08:10 (edge), 09:30
		// (whole hour), 10:15 (edge).
		hours, err := tx.FieldRollups("ws_1", agent, "outcome", day.Add(8*time.Hour+5*time.Minute), day.Add(10*time.Hour+20*time.Minute), time.Hour)
		if err != nil {
			return err
		}
		if len(hours) != 3 || !hours[0].Start.Equal(day.Add(8*time.Hour)) || hours[0].Values["declined"] != 1 || hours[0].Version != 1 ||
			hours[1].Version != 2 || hours[2].Values["booked"] != 1 {
			t.Fatalf("hour buckets = %+v", hours)
		}
		days, err := tx.FieldRollups("ws_1", agent, "outcome", day, day.Add(24*time.Hour), 24*time.Hour)
		if err != nil {
			return err
		}
		if len(days) != 2 || days[0].Version != 1 || days[0].Count != 2 || days[1].Version != 2 || days[1].Values["booked"] != 2 {
			t.Fatalf("day buckets per version = %+v", days)
		}
		scores, _ := tx.FieldRollups("ws_1", agent, "score", day, day.Add(24*time.Hour), 24*time.Hour)
		if n, _, numbers, total := sumFieldBuckets(scores); n != 3 || numbers != 3 || total != 11 {
			t.Errorf("score = %+v", scores)
		}
		if none, _ := tx.FieldRollups("ws_2", agent, "outcome", day, day.Add(24*time.Hour), time.Hour); len(none) != 0 {
			t.Errorf("another workspace's buckets = %+v", none)
		}
		return nil
	})
}

// checkFieldRollupsTakenBack replaces, clears and deletes: each takes back exactly
// what it added.
func checkFieldRollupsTakenBack(t *testing.T, s service.Store, calls []*data.Call, agent string, day time.Time) {
	t.Helper()
	update(t, s, func(tx service.Tx) error {
		if err := tx.SetCallAnalysisValues(calls[0], valuesOf(calls[0], 1, "callback", number(3))); err != nil {
			return err
		}
		if err := tx.SetCallAnalysisValues(calls[1], nil); err != nil {
			return err
		}
		return tx.DeleteCall(calls[3].ID, nil)
	})
	view(t, s, func(tx service.Tx) error {
		days, _ := tx.FieldRollups("ws_1", agent, "outcome", day, day.Add(24*time.Hour), 24*time.Hour)
		if n, values, _, _ := sumFieldBuckets(days); n != 2 || !reflect.DeepEqual(values, map[string]int64{"callback": 1, "booked": 1}) {
			t.Errorf("after a replace, a clear and a delete = %+v", days)
		}
		scores, _ := tx.FieldRollups("ws_1", agent, "score", day, day.Add(24*time.Hour), time.Hour)
		if n, _, numbers, total := sumFieldBuckets(scores); n != 1 || numbers != 1 || total != 3 || len(scores[0].Sketch) != 1 {
			t.Errorf("scores after = %+v", scores)
		}
		return nil
	})
}

// testCallCostRollups: a call's cost adds to its hour's rollup per currency and per
// version, and an update or delete moves it.
func testCallCostRollups(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	agent := g.New(data.PrefixAgent)
	v3 := 3
	c := newCall(g, "ws_1", agent, data.DirectionWeb, data.CallEnded)
	c.AgentVersion = &v3
	c.Cost = &data.CallCost{Currency: "USD", TotalMicros: 1234, Total: 1234, Lines: []data.CostLine{}, Unpriced: []data.CostLine{}}
	d := newCall(g, "ws_1", agent, data.DirectionWeb, data.CallEnded)
	update(t, s, func(tx service.Tx) error {
		if err := tx.InsertCall(c); err != nil {
			return err
		}
		return tx.InsertCall(d)
	})
	day := c.CreatedAt.Truncate(24 * time.Hour)
	check := func(what string, cost, versionCost map[string]int64) {
		t.Helper()
		view(t, s, func(tx service.Tx) error {
			for _, a := range []string{"", agent} {
				days, err := tx.CallRollups("ws_1", a, day, day.Add(24*time.Hour), 24*time.Hour)
				if err != nil {
					return err
				}
				if len(days) != 1 || !reflect.DeepEqual(days[0].Cost, cost) || !reflect.DeepEqual(days[0].VersionCost, versionCost) {
					t.Errorf("%s, agent %q: %+v", what, a, days)
				}
			}
			return nil
		})
	}
	check("inserted", map[string]int64{"USD": 1234}, map[string]int64{"3 USD": 1234})
	d.Cost = &data.CallCost{Currency: "USD", TotalMicros: 1000, Total: 1000, Lines: []data.CostLine{}, Unpriced: []data.CostLine{}}
	update(t, s, func(tx service.Tx) error { return tx.PutCall(d) })
	check("a cost added", map[string]int64{"USD": 2234}, map[string]int64{"3 USD": 1234, " USD": 1000})
	update(t, s, func(tx service.Tx) error { return tx.DeleteCall(c.ID, nil) })
	check("deleted", map[string]int64{"USD": 1000}, map[string]int64{" USD": 1000})
}
