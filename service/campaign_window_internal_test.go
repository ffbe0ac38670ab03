package service

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// The window's next opening on each recipient's wall clock, across both daylight-saving
// changes of New York in 2026 (8 March, 1 November), a spring-forward gap that swallows
// the opening, and a window whose day has passed.
func TestCallWindowNext(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	weekdays := compileWindow(data.CampaignWindow{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "17:00"})
	gap := compileWindow(data.CampaignWindow{Days: []string{"sun"}, Start: "02:30", End: "04:00"})
	gapShort := compileWindow(data.CampaignWindow{Days: []string{"sun"}, Start: "02:30", End: "03:15"})
	fold := compileWindow(data.CampaignWindow{Days: []string{"sun"}, Start: "01:00", End: "01:30"})
	utc := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	cases := []struct {
		name string
		w    callWindow
		from string
		want string
	}{
		{"inside", weekdays, "2026-03-06T15:00:00Z", "2026-03-06T15:00:00Z"},
		{"before the opening (EST)", weekdays, "2026-03-06T13:59:00Z", "2026-03-06T14:00:00Z"},
		{"after Friday's close: Monday, after the spring change (EDT)", weekdays, "2026-03-06T22:00:00Z", "2026-03-09T13:00:00Z"},
		{"after the autumn change (EST again)", weekdays, "2026-10-30T21:30:00Z", "2026-11-02T14:00:00Z"},
		{"02:30 does not exist on 8 March: 03:00 EDT", gap, "2026-03-08T05:00:00Z", "2026-03-08T07:00:00Z"},
		{"a normal Sunday 02:30 EST", gap, "2026-03-01T05:00:00Z", "2026-03-01T07:30:00Z"},
		// The jump lands inside a window that closes soon after it.
		{"02:30 to 03:15 on 8 March: open from 03:00 EDT", gapShort, "2026-03-08T05:00:00Z", "2026-03-08T07:00:00Z"},
		// The hour from 01:00 comes twice on 1 November: after the first pass (EDT), the
		// window opens again at 01:00 EST.
		{"after the first 01:00 to 01:30 on 1 November: the second", fold, "2026-11-01T05:45:00Z", "2026-11-01T06:00:00Z"},
		{"inside the second 01:00 to 01:30", fold, "2026-11-01T06:10:00Z", "2026-11-01T06:10:00Z"},
	}
	for _, c := range cases {
		if got := c.w.next(utc(c.from), ny).UTC(); !got.Equal(utc(c.want)) {
			t.Errorf("%s: next(%s) = %s, want %s", c.name, c.from, got.Format(time.RFC3339), c.want)
		}
	}
	if !weekdays.contains(utc("2026-03-09T13:00:00Z").In(ny)) || weekdays.contains(utc("2026-03-09T12:59:00Z").In(ny)) {
		t.Error("contains: 09:00 EDT is inside, 08:59 is not")
	}
}

// Lord Howe's clocks move 30 minutes, from 02:00 to 02:30, on 7 October 2035: a window
// from 02:03 opens at 02:30, not 02:33 (FuzzCallWindowNext's first find: the opening was
// read at the old offset, half an hour late).
func TestCallWindowNextHalfHourGap(t *testing.T) {
	lh, err := time.LoadLocation("Australia/Lord_Howe")
	if err != nil {
		t.Fatal(err)
	}
	w := compileWindow(data.CampaignWindow{Days: []string{"sun"}, Start: "02:03", End: "03:10"})
	from := time.Date(2035, 10, 6, 12, 0, 0, 0, lh)
	if got, want := w.next(from, lh), time.Date(2035, 10, 7, 2, 30, 0, 0, lh); !got.Equal(want) {
		t.Errorf("next(%s) = %s, want %s", from, got, want)
	}
}
