package console

import "testing"

// A replay range's typed times are read in the zone the form names (the browser's, which
// patterns.js fills), in UTC without one (the page without script says UTC), and passed
// on unchanged when they are not times, for the API to refuse with its message.
func TestTypedTimeReadsTheFormsZone(t *testing.T) {
	for _, c := range []struct{ in, zone, want string }{
		{"2026-01-15T09:30", "", "2026-01-15T09:30:00Z"},
		{"2026-01-15T09:30", "America/New_York", "2026-01-15T09:30:00-05:00"},
		{"2026-07-15T09:30", "America/New_York", "2026-07-15T09:30:00-04:00"}, // daylight saving
		{"2026-01-15T09:30", "Asia/Kolkata", "2026-01-15T09:30:00+05:30"},
		{"2026-01-15T09:30", "Not/A_Zone", "2026-01-15T09:30:00Z"},
		{"yesterday", "Europe/Paris", "yesterday"},
	} {
		if got := typedTime(c.in, c.zone); got != c.want {
			t.Errorf("typedTime(%q, %q) = %q, want %q", c.in, c.zone, got, c.want)
		}
	}
}
