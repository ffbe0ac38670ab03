package data_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// TestSumCallRollups feeds whole hours and edge calls and checks which spans are asked
// for and how they land in buckets.
func TestSumCallRollups(t *testing.T) {
	h := func(n int) time.Time { return time.Date(2026, 3, 1, n, 0, 0, 0, time.UTC) }
	ended := data.CallEnded
	reason, ms := "user_hangup", int64(1000)
	one := data.RollupOf(&data.Call{Status: ended, DurationMS: &ms, DisconnectionReason: &reason})
	var spans [][2]time.Time
	hours := func(from, to time.Time, fn func(time.Time, data.CallRollup)) error {
		spans = append(spans, [2]time.Time{from, to})
		for x := from; x.Before(to); x = x.Add(time.Hour) {
			fn(x, data.CallRollup{Calls: 2, Failed: 2, Reasons: map[string]int64{reason: 1}})
		}
		return nil
	}
	edges := func(from, to time.Time, fn func(time.Time, data.CallRollup)) error {
		spans = append(spans, [2]time.Time{from, to})
		fn(from.Truncate(time.Hour), one)
		return nil
	}
	from, to := h(1).Add(30*time.Minute), h(4).Add(15*time.Minute)
	got, err := data.SumCallRollups(from, to, 2*time.Hour, hours, edges)
	if err != nil {
		t.Fatal(err)
	}
	wantSpans := [][2]time.Time{{h(2), h(4)}, {from, h(2)}, {h(4), to}}
	if !reflect.DeepEqual(spans, wantSpans) {
		t.Errorf("spans %v, want %v", spans, wantSpans)
	}
	want := []data.CallBucket{
		{Start: h(0), Calls: 1, Ended: 1, DurationMS: 1000, WithDuration: 1, Reasons: map[string]int64{reason: 1}, Versions: one.Versions},
		{Start: h(2), Calls: 4, Failed: 4, Reasons: map[string]int64{reason: 2}},
		{Start: h(4), Calls: 1, Ended: 1, DurationMS: 1000, WithDuration: 1, Reasons: map[string]int64{reason: 1}, Versions: one.Versions},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("buckets\n%+v\nwant\n%+v", got, want)
	}

	// Within one hour only the calls are read; an empty range or step reads nothing.
	spans = nil
	got, _ = data.SumCallRollups(h(1).Add(time.Minute), h(1).Add(2*time.Minute), time.Hour, hours, edges)
	if len(spans) != 1 || len(got) != 1 || got[0].Start != h(1) {
		t.Errorf("within an hour: spans %v, buckets %+v", spans, got)
	}
	// Across one hour's start with no whole hour in between (an hour back from now), each
	// edge is asked for its part within its own hour: an edge's feed counts its span under
	// the hour it starts in, and one span across both hours lost the later hour's calls.
	spans = nil
	from, to = h(1).Add(52*time.Minute), h(2).Add(52*time.Minute)
	got, _ = data.SumCallRollups(from, to, time.Hour, hours, edges)
	if want := [][2]time.Time{{from, h(2)}, {h(2), to}}; !reflect.DeepEqual(spans, want) || len(got) != 2 {
		t.Errorf("across an hour's start: spans %v, want %v; buckets %+v", spans, want, got)
	}
	for _, step := range []time.Duration{0, time.Hour} {
		spans = nil
		if got, _ := data.SumCallRollups(h(2), h(2), step, hours, edges); got != nil || spans != nil {
			t.Errorf("empty range, step %v: %+v, spans %v", step, got, spans)
		}
	}
	// No call at all: empty, not nil.
	none := func(from, to time.Time, fn func(time.Time, data.CallRollup)) error { return nil }
	if got, _ := data.SumCallRollups(h(1), h(3), time.Hour, none, none); got == nil || len(got) != 0 {
		t.Errorf("no calls: %#v", got)
	}
}

func TestCallRollupAddNegated(t *testing.T) {
	reason := "voicemail"
	r := data.RollupOf(&data.Call{Status: data.CallFailed, DisconnectionReason: &reason})
	sum := r
	sum.Add(r.Negated(), 1)
	if !sum.IsZero() || sum.Reasons != nil && len(sum.Reasons) != 0 {
		t.Errorf("r + -r = %+v", sum)
	}
	if r.IsZero() || r.Failed != 1 || r.Ended != 0 || r.WithDuration != 0 {
		t.Errorf("RollupOf a failed call: %+v", r)
	}
}
