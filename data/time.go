package data

import (
	"fmt"
	"time"
)

// TimeLayout is the wire format of every timestamp: RFC 3339, UTC, milliseconds, "Z".
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Time is a timestamp that marshals as TimeLayout. Values are kept at millisecond precision
// so that what is stored equals what is shown.
type Time struct{ time.Time }

// NewTime truncates t to milliseconds in UTC.
func NewTime(t time.Time) Time { return Time{t.UTC().Truncate(time.Millisecond)} }

// MarshalJSON writes the timestamp, or null for the zero time.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.UTC().Format(TimeLayout) + `"`), nil
}

// UnmarshalJSON accepts an RFC 3339 timestamp that MarshalJSON can write back, or null.
// An offset can carry a timestamp out of RFC 3339's four-digit years once in UTC
// (9999-12-31T23:00:00-05:00 is in the year 10000): stored, such a time could not be
// read again, and every read of its record failed.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Time{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("not a timestamp")
	}
	parsed, err := time.Parse(time.RFC3339Nano, string(b[1:len(b)-1]))
	if err != nil {
		return fmt.Errorf("not an RFC 3339 timestamp (such as 2026-11-21T10:04:05Z)")
	}
	if y := parsed.UTC().Year(); y < 0 || y > 9999 {
		return fmt.Errorf("in UTC it falls outside the years 0000 to 9999 that RFC 3339 writes")
	}
	*t = NewTime(parsed)
	return nil
}

// Ptr returns a pointer to t, or nil for the zero time (for nullable timestamps).
func (t Time) Ptr() *Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
