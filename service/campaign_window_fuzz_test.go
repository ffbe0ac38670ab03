package service

import (
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// fuzzZones are zones whose clocks do what a window must survive: none (UTC, Kolkata's
// half hour, Kathmandu's 45 minutes), the usual hour at 02:00 (New York) and 01:00
// (London), Lord Howe's 30-minute shift, Dublin's negative summer time, Troll's two
// hours, São Paulo's and Santiago's changes at midnight (the day has no 00:00), Samoa's
// lost 30 December 2011, Casablanca's Ramadan suspensions and Chatham's 12:45.
var fuzzZones = []string{
	"UTC", "Asia/Kolkata", "Asia/Kathmandu", "America/New_York", "Europe/London",
	"Australia/Lord_Howe", "Europe/Dublin", "Antarctica/Troll", "America/Sao_Paulo",
	"America/Santiago", "Pacific/Apia", "Africa/Casablanca", "Pacific/Chatham",
}

// fuzzWindow builds a window validation accepts from arbitrary numbers: the days of the
// low seven bits of days (Monday first; none means Monday), start before end.
func fuzzWindow(days uint8, start, length uint16) data.CampaignWindow {
	var w data.CampaignWindow
	for i, name := range data.Weekdays {
		if days&(1<<i) != 0 {
			w.Days = append(w.Days, name)
		}
	}
	if len(w.Days) == 0 {
		w.Days = []string{data.Weekdays[0]}
	}
	const lastMinute = 23*60 + 59 // "23:59", the latest end the clock pattern allows
	s := int(start) % lastMinute
	e := s + 1 + int(length)%(lastMinute-s)
	w.Start, w.End = fmt.Sprintf("%02d:%02d", s/60, s%60), fmt.Sprintf("%02d:%02d", e/60, e%60)
	return w
}

// firstInside walks minute by minute from from (then from's following minutes) for at
// most span and returns the first instant inside w on loc's wall clock. The oracle of
// FuzzCallWindowNext: slow, but obviously right, since the local minute of every zone
// here changes only on a UTC minute from 1980 on.
func firstInside(w callWindow, from time.Time, loc *time.Location, span time.Duration) (time.Time, bool) {
	if w.contains(from.In(loc)) {
		return from, true
	}
	for t := from.Truncate(time.Minute).Add(time.Minute); !t.After(from.Add(span)); t = t.Add(time.Minute) {
		if w.contains(t.In(loc)) {
			return t, true
		}
	}
	return time.Time{}, false
}

// FuzzCallWindowNext: for any instant from 1980 to 2100, zone, window and backoff (the
// call sites ask next(now+backoff)), next is the first instant at or after the one asked
// that is inside the window on the zone's wall clock: never earlier, inside, and no
// minute strictly between is inside (the minute walk firstInside is the oracle, so
// daylight-saving gaps and folds are judged on the wall clock the recipient sees).
// contains is the window read off the wall clock.
func FuzzCallWindowNext(f *testing.F) {
	ny := 3
	// TestCallWindowNext's cases, and the changes of each kind of zone.
	f.Add(int64(1772809200), uint16(0), uint8(ny), uint8(0b11111), uint16(540), uint16(479))
	f.Add(int64(1772946000), uint16(0), uint8(ny), uint8(0b1000000), uint16(150), uint16(89))
	f.Add(int64(1792789200), uint16(60), uint8(ny), uint8(0b1111111), uint16(60), uint16(30))
	f.Add(int64(1774749600), uint16(1), uint8(4), uint8(0b1000000), uint16(60), uint16(59))
	f.Add(int64(1775318400), uint16(0), uint8(5), uint8(0b1111111), uint16(130), uint16(40))
	f.Add(int64(1759593600), uint16(0), uint8(5), uint8(0b1111111), uint16(125), uint16(20))
	f.Add(int64(1325073600), uint16(0), uint8(10), uint8(0b10000), uint16(600), uint16(60))
	f.Add(int64(1540000000), uint16(0), uint8(8), uint8(0b1000000), uint16(0), uint16(30))
	f.Add(int64(1700000000), uint16(30), uint8(0), uint8(0b1), uint16(1438), uint16(0))
	f.Fuzz(func(t *testing.T, unix int64, backoff uint16, zone, days uint8, start, length uint16) {
		const from1980, to2100 = 315532800, 4102444800
		asked := time.Unix(from1980+(unix%(to2100-from1980)+(to2100-from1980))%(to2100-from1980), 0).
			Add(time.Duration(int(backoff)%validate.MaxBackoffMinutes) * time.Minute)
		loc := location(fuzzZones[int(zone)%len(fuzzZones)])
		window := fuzzWindow(days, start, length)
		w := compileWindow(window)

		local := asked.In(loc)
		m := local.Hour()*60 + local.Minute()
		inDay := false
		for _, d := range window.Days {
			inDay = inDay || d == data.Weekdays[(int(local.Weekday())+6)%7]
		}
		if want := inDay && m >= validate.ClockMinutes(window.Start) && m < validate.ClockMinutes(window.End); w.contains(local) != want {
			t.Fatalf("contains(%s in %s) = %v for %+v", local, loc, !want, window)
		}

		got := w.next(asked, loc)
		want, found := firstInside(w, asked, loc, maxWindowDays*24*time.Hour)
		if !found {
			t.Fatalf("no instant of %+v in %s within %d days of %s", window, loc, maxWindowDays, asked.UTC())
		}
		if !got.Equal(want) {
			t.Fatalf("next(%s) of %+v in %s = %s (%s), want %s (%s)", asked.UTC().Format(time.RFC3339), window, loc,
				got.UTC().Format(time.RFC3339), got.In(loc).Format(time.RFC3339), want.UTC().Format(time.RFC3339), want.In(loc).Format(time.RFC3339))
		}
	})
}
