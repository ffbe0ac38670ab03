package service

import (
	"sync"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// A campaign's calling window is judged on each recipient's own wall clock (conventions
// §25): a day of the window and a time of day from start (inclusive) to end (exclusive).
// Wall clocks make daylight saving fall out by itself: 09:00 is 09:00 on either side of a
// change. What needs care is the opening next finds: a window opening at a time that does
// not exist on a spring-forward day (02:30 where clocks jump from 02:00 to 03:00) opens
// at the jump if the window is still open then, and a window whose hour a fall-back
// repeats opens again after it.

// callWindow is a window ready to be asked.
type callWindow struct {
	days       [7]bool // by time.Weekday
	start, end int     // minutes of the day
}

func compileWindow(w data.CampaignWindow) callWindow {
	var cw callWindow
	for _, d := range w.Days {
		for i, name := range data.Weekdays {
			if name == d {
				cw.days[(i+1)%7] = true // Weekdays is Monday first; time.Weekday is Sunday first
			}
		}
	}
	cw.start, cw.end = validate.ClockMinutes(w.Start), validate.ClockMinutes(w.End)
	return cw
}

// contains reports whether t, read on the wall clock of t's location, is in the window.
func (w callWindow) contains(t time.Time) bool {
	m := t.Hour()*60 + t.Minute()
	return w.days[t.Weekday()] && m >= w.start && m < w.end
}

// maxWindowDays bounds the days next looks ahead: a week, and a week again when a
// daylight-saving change swallowed the window's only opening.
const maxWindowDays = 15

// next returns the first instant at or after from (to the minute) that is inside the
// window on loc's wall clock. It goes from one of loc's offsets to the next: while an
// offset holds, the wall clock runs with real time, so the first opening is plain date
// arithmetic, and it counts if it comes before the offset changes; otherwise the search
// goes on from the change (which may itself land inside the window).
func (w callWindow) next(from time.Time, loc *time.Location) time.Time {
	limit := from.Add(maxWindowDays * 24 * time.Hour)
	for t := from; t.Before(limit); {
		local := t.In(loc)
		open := w.nextOnFixedClock(local)
		_, change := local.ZoneBounds()
		if change.IsZero() || open.Before(change) {
			return open.In(loc)
		}
		t = change
	}
	return limit // unreachable for a valid window: it opens every week
}

// nextOnFixedClock returns the first instant at or after local that is inside the window
// on a clock that keeps local's offset for ever.
func (w callWindow) nextOnFixedClock(local time.Time) time.Time {
	_, offset := local.Zone()
	fixed := local.In(time.FixedZone("", offset))
	if w.contains(fixed) {
		return local
	}
	for d := 0; d <= 7; d++ {
		day := time.Date(fixed.Year(), fixed.Month(), fixed.Day()+d, 0, 0, 0, 0, fixed.Location())
		open := day.Add(time.Duration(w.start) * time.Minute)
		if w.days[day.Weekday()] && open.After(fixed) {
			return open
		}
	}
	return local.Add(8 * 24 * time.Hour) // a window on no day: validation refuses it
}

// locations caches loaded time zones: a claim asks for one per recipient.
var locations sync.Map // name → *time.Location

// location returns the named zone; UTC for "" (and for a name no longer known, which
// validation refused when it was stored).
func location(name string) *time.Location {
	if name == "" {
		return time.UTC
	}
	if l, ok := locations.Load(name); ok {
		return l.(*time.Location)
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		l = time.UTC
	}
	locations.Store(name, l)
	return l
}
