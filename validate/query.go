package validate

import (
	"net/url"
	"strconv"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
)

// Bounds of the analytics query (docs/analytics.md).
const (
	// MaxAnalyticsBuckets bounds the series, so one request cannot ask for years of hours.
	MaxAnalyticsBuckets = 2000
	// DefaultAnalyticsRange is the range when from is not given: the last 30 days.
	DefaultAnalyticsRange = 30 * 24 * time.Hour
)

// TimeParam reads the query parameter name as an RFC 3339 timestamp in UTC; the zero time
// when it is absent. A bad value is a fault on name.
func TimeParam(errs *Errors, q url.Values, name string) time.Time {
	s := q.Get(name)
	if s == "" && !q.Has(name) {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !timeInRange(t) {
		errs.Addf(name, "The %s parameter must be an RFC 3339 timestamp such as 2026-11-21T10:04:05Z.", name)
		return time.Time{}
	}
	return t.UTC()
}

// timeInRange reports whether t, in UTC, is in the years 0001 to 9999. An offset can carry
// year 0000 or 9999 out of RFC 3339's range once in UTC, where the time can no longer be
// written back (found by FuzzCallQuery); year 0000 is 1 BC, no date a client means.
func timeInRange(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1 && y <= 9999
}

// Timestamp checks a body's timestamp at path (RFC 3339, as data.Time decoded it): in the
// years 0001 to 9999, and not 0001-01-01T00:00:00Z, the zero time, which a record shows
// as null (a campaign's start_at so given was stored as none).
func Timestamp(errs *Errors, path string, t data.Time) {
	if t.IsZero() || !timeInRange(t.Time) {
		errs.Addf(path, "The %s field must be a timestamp from 0001-01-01T00:00:00.001Z to 9999-12-31T23:59:59.999Z.", path)
	}
}

func idParam(errs *Errors, q url.Values, name, prefix, what string) string {
	s := q.Get(name)
	if s == "" && !q.Has(name) {
		return ""
	}
	if !data.ValidID(prefix, s) {
		errs.Addf(name, "The %s parameter must be the id of %s.", name, what)
	}
	return s
}

func enumParam(errs *Errors, q url.Values, name string, allowed []string) string {
	s := q.Get(name)
	if s == "" && !q.Has(name) {
		return ""
	}
	errs.OneOf(name, s, allowed...)
	return s
}

// CallFilter reads the filters of GET /api/v1/calls and checks their range; every bad
// parameter is named: CallFilterParams and CallFilterRange together.
func CallFilter(q url.Values) (data.CallFilter, error) {
	f, err := CallFilterParams(q)
	return f, Combine(err, CallFilterRange(f))
}

// CallFilterParams reads the filters of GET /api/v1/calls, naming every bad parameter.
func CallFilterParams(q url.Values) (data.CallFilter, error) {
	var errs Errors
	f := data.CallFilter{
		AgentID:   idParam(&errs, q, "agent_id", data.PrefixAgent, "an agent"),
		NumberID:  idParam(&errs, q, "number_id", data.PrefixNumber, "a number"),
		Direction: enumParam(&errs, q, "direction", data.CallDirections),
		Status:    enumParam(&errs, q, "status", data.CallStatuses),
		From:      TimeParam(&errs, q, "from"),
		To:        TimeParam(&errs, q, "to"),
	}
	return f, errs.Err()
}

// CallFilterRange checks a list filter's range: to, when given with from, is after it.
func CallFilterRange(f data.CallFilter) error {
	var errs Errors
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		errs.Add("to", "The to parameter must be after from.")
	}
	return errs.Err()
}

// CallAnalytics reads the query of GET /api/v1/analytics/calls with its defaults and
// checks its range: CallAnalyticsParams, then CallAnalyticsRange on the clock's now.
func CallAnalytics(q url.Values, now time.Time) (data.CallAnalyticsQuery, error) {
	out, err := CallAnalyticsParams(q)
	if err != nil {
		return out, err
	}
	return out, CallAnalyticsRange(&out, now)
}

// CallAnalyticsParams reads the parameters of GET /api/v1/analytics/calls, naming every
// bad one; an absent from or to stays zero and an absent interval empty, for
// CallAnalyticsRange to default.
func CallAnalyticsParams(q url.Values) (data.CallAnalyticsQuery, error) {
	var errs Errors
	out := data.CallAnalyticsQuery{
		AgentID:  idParam(&errs, q, "agent_id", data.PrefixAgent, "an agent"),
		Interval: enumParam(&errs, q, "interval", analyticsIntervals),
		From:     TimeParam(&errs, q, "from"),
		To:       TimeParam(&errs, q, "to"),
	}
	out.AgentVersion = versionParam(&errs, q, out.AgentID)
	return out, errs.Err()
}

// versionParam reads agent_version: a version number, of the agent agent_id names
// (versions are numbered per agent, so the filter needs it).
func versionParam(errs *Errors, q url.Values, agentID string) *int {
	s := q.Get("agent_version")
	if s == "" && !q.Has("agent_version") {
		return nil
	}
	n, err := strconv.Atoi(s)
	switch {
	case err != nil || n < 1:
		errs.Add("agent_version", "The agent_version parameter must be a version number (at least 1).")
		return nil
	case agentID == "":
		errs.Add("agent_version", "The agent_version parameter needs agent_id: versions are numbered per agent.")
	}
	return &n
}

var analyticsIntervals = []string{data.IntervalHour, data.IntervalDay}

// CallAnalyticsRange gives a parsed analytics query its defaults (to is now, inclusive;
// from is 30 days before to; interval is day) and checks its range, which may hold at
// most MaxAnalyticsBuckets buckets.
func CallAnalyticsRange(q *data.CallAnalyticsQuery, now time.Time) error {
	var errs Errors
	if q.Interval == "" {
		q.Interval = data.IntervalDay
	}
	errs.OneOf("interval", q.Interval, analyticsIntervals...) // callers other than the query string
	if q.To.IsZero() {
		// Up to and including the current millisecond, so a call registered just now counts.
		q.To = now.UTC().Truncate(time.Millisecond).Add(time.Millisecond)
	}
	if q.From.IsZero() {
		q.From = q.To.Add(-DefaultAnalyticsRange)
	}
	if errs.Len() > 0 {
		return errs.Err()
	}
	if !q.To.After(q.From) {
		errs.Add("to", "The to parameter must be after from.")
		return errs.Err()
	}
	step := time.Hour
	if q.Interval == data.IntervalDay {
		step = 24 * time.Hour
	}
	if n := AnalyticsBuckets(q.From, q.To, step); n > MaxAnalyticsBuckets {
		errs.Addf("to", "The range from from to to holds %d %s buckets; at most %d are allowed: narrow the range or use a longer interval.", n, q.Interval, MaxAnalyticsBuckets)
	}
	return errs.Err()
}

// AnalyticsBuckets counts the UTC-aligned buckets of width step that [from, to) touches.
func AnalyticsBuckets(from, to time.Time, step time.Duration) int64 {
	first := from.UTC().Truncate(step)
	return int64((to.UTC().Sub(first) + step - 1) / step)
}

// AnalysisParams reads the parameters of GET /api/v1/analytics/analysis, naming every bad
// one: agent_id and field are required, agent_version is a version number; the range and
// interval are read and defaulted as the call analytics' (AnalysisRange).
func AnalysisParams(q url.Values) (data.AnalysisQuery, error) {
	var errs Errors
	out := data.AnalysisQuery{
		AgentID:  idParam(&errs, q, "agent_id", data.PrefixAgent, "an agent"),
		Field:    q.Get("field"),
		Interval: enumParam(&errs, q, "interval", analyticsIntervals),
		From:     TimeParam(&errs, q, "from"),
		To:       TimeParam(&errs, q, "to"),
	}
	if out.AgentID == "" && !errs.Has("agent_id") {
		errs.Add("agent_id", "The agent_id parameter is required.")
	}
	if out.Field == "" {
		// Named with what it takes: "the field field is required" told nothing.
		errs.Add("field", "The field parameter is required: the name of one of the agent's analysis_config.fields, or call_successful.")
	} else {
		errs.MaxLen("field", out.Field, MaxAnalysisFieldName)
	}
	if s := q.Get("agent_version"); s != "" || q.Has("agent_version") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			errs.Add("agent_version", "The agent_version parameter must be a version number (1 or more).")
		} else {
			out.Version = &n
		}
	}
	return out, errs.Err()
}

// AnalysisRange gives an analysis query the call analytics' defaults and checks its
// range (CallAnalyticsRange).
func AnalysisRange(q *data.AnalysisQuery, now time.Time) error {
	c := data.CallAnalyticsQuery{From: q.From, To: q.To, Interval: q.Interval}
	err := CallAnalyticsRange(&c, now)
	q.From, q.To, q.Interval = c.From, c.To, c.Interval
	return err
}

// PageCursorForm is a fault on cursor when it has not the form of a list's cursor
// (pagecursor.WellFormed). Whether it belongs to the list and this database signed it
// only storage tells, as it reads the page.
func PageCursorForm(cursor string) error {
	if cursor == "" || pagecursor.WellFormed(cursor) {
		return nil
	}
	return PageCursorRefused()
}

// PageCursorRefused is the fault of a cursor a list does not take: malformed, tampered
// with, or another list's, in the one message every list gives.
func PageCursorRefused() error { return data.FieldError("cursor", pagecursor.Refused) }

// agentStatusFilter checks a list's agent_id and status filters given by a caller that
// did not read them from a query (the console, the Go client's callers, tests): one rule
// for every list filtered so (campaigns, conversations), its agent_id told as idParam
// tells it.
func agentStatusFilter(agentID, status string, statuses []string) error {
	var errs Errors
	if agentID != "" && !data.ValidID(data.PrefixAgent, agentID) {
		errs.Addf("agent_id", "The agent_id parameter must be the id of %s.", "an agent")
	}
	if status != "" {
		errs.OneOf("status", status, statuses...)
	}
	return errs.Err()
}
