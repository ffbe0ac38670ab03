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
// change. The one case that needs care is a window opening at a time that does not exist
// on a spring-forward day (02:30 where clocks jump from 02:00 to 03:00): it opens at the
// first minute after the jump that is inside the window, or not that day.

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
// window on loc's wall clock.
func (w callWindow) next(from time.Time, loc *time.Location) time.Time {
	local := from.In(loc)
	if w.contains(local) {
		return from
	}
	for d := 0; d < maxWindowDays; d++ {
		day := time.Date(local.Year(), local.Month(), local.Day()+d, 12, 0, 0, 0, loc) // noon: always exists
		if !w.days[day.Weekday()] {
			continue
		}
		open := time.Date(day.Year(), day.Month(), day.Day(), w.start/60, w.start%60, 0, 0, loc)
		if open.Before(from) {
			if d == 0 {
				continue // today's window is over (from is not inside it)
			}
			open = from
		}
		if w.contains(open.In(loc)) {
			return open
		}
		// The opening fell into a spring-forward gap: the first minute after it.
		for m := 1; m <= w.end-w.start; m++ {
			if t := open.Add(time.Duration(m) * time.Minute); w.contains(t.In(loc)) {
				return t.Truncate(time.Minute)
			}
		}
	}
	return from.Add(maxWindowDays * 24 * time.Hour) // unreachable for a valid window
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
