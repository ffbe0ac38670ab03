package console

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The console's human formats, shared by every page (docs/dashboard.md, "Shared
// patterns"): numbers in plain decimal, times that console.js turns into the browser's
// time zone with a relative form, durations in units, and labels instead of the API's
// snake_case (labels.go).

// str shows a decoded JSON value as text. Numbers are plain decimals: the API's own
// numbers decode as float64, which fmt would print as 3.6e+06; a user's number that a
// float64 cannot hold as written is a json.Number, shown as written (floatsWhereExact).
func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// figure shows a measured number to three significant digits: a percentile from the
// analysis sketch is within 1% of the exact one, so its sixteen digits (2.9742334234766927)
// claimed a precision it does not have.
func figure(v any) string {
	f, ok := v.(float64)
	if !ok {
		return str(v)
	}
	rounded, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 3, 64), 64)
	return strconv.FormatFloat(rounded, 'f', -1, 64)
}

// count shows a whole number with thousands separators (12,345), for reading, never
// for a form's value.
func count(v any) string {
	f, ok := v.(float64)
	if !ok {
		if i, isInt := v.(int64); isInt {
			f, ok = float64(i), true
		}
	}
	if !ok {
		return "—"
	}
	s := strconv.FormatFloat(math.Abs(math.Round(f)), 'f', 0, 64)
	var b strings.Builder
	if f < 0 {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Layouts of the server's own rendering of a time, before the browser rewrites it.
const (
	whenLayout = "2 Jan 2006, 15:04 UTC"
	dayLayout  = "2 Jan 2006"
)

// when renders an RFC 3339 timestamp as a <time> element. Its text is the time in UTC,
// which is what a browser without script shows; console.js rewrites it in the browser's
// time zone, relative when recent ("3 min ago"), with the full local time as its title.
// Absent or unreadable values show as an em dash or as given.
func when(v any) template.HTML {
	return timeElement(v, whenLayout, "")
}

// whenDay is when for a date the API gives as midnight UTC (a key's expiry): the day is
// shown as the API means it, never moved by the browser's time zone.
func whenDay(v any) template.HTML {
	return timeElement(v, dayLayout, "day")
}

func timeElement(v any, layout, kind string) template.HTML {
	s, _ := v.(string)
	if s == "" {
		return "—"
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return template.HTML(template.HTMLEscapeString(s))
	}
	return template.HTML(fmt.Sprintf(`<time datetime="%s" data-when="%s">%s</time>`,
		t.UTC().Format(time.RFC3339), kind, t.UTC().Format(layout)))
}

// duration shows milliseconds in units: "850 ms", "12 s", "3 min 30 s", "1 h 5 min".
// Seconds are left out once there are hours: nobody reads them there.
func duration(v any) string {
	ms, ok := v.(float64)
	if !ok {
		if i, isInt := v.(int64); isInt {
			ms, ok = float64(i), true
		}
	}
	if !ok || ms < 0 {
		return "—"
	}
	if ms == 0 {
		return "0 s"
	}
	if ms < 1000 {
		return strconv.FormatFloat(math.Round(ms), 'f', 0, 64) + " ms"
	}
	total := int64(math.Round(ms / 1000))
	h, m, s := total/3600, total%3600/60, total%60
	var parts []string
	if h > 0 {
		parts = append(parts, strconv.FormatInt(h, 10)+" h")
	}
	if m > 0 {
		parts = append(parts, strconv.FormatInt(m, 10)+" min")
	}
	if s > 0 && h == 0 {
		parts = append(parts, strconv.FormatInt(s, 10)+" s")
	}
	if len(parts) == 0 {
		return "0 s"
	}
	return strings.Join(parts, " ")
}

// share is n of all as a percentage to one decimal, the one form of every share the
// console shows (a rollout's rates, a campaign's progress, a test's pass rate): never
// rounded to 100.0% or 0.0% when it is not exactly so, as 1 failure in 10,000 or 3
// recipients done of 5,000 would be. all must be above 0.
func share(n, all int64) string {
	return shareOf(float64(n) / float64(all))
}

// shareOf is share for a fraction the API gives (a test's pass_rate, 0 to 1).
func shareOf(f float64) string {
	p := 100 * f
	switch {
	case f < 1 && p >= 99.95:
		return ">99.9%"
	case f > 0 && p < 0.05:
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", p)
}

// toJSON shows a value as indented JSON (diffs, unknown shapes).
func toJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// clock shows an offset into a call as a player does: "0:02", "12:40", "1:02:03".
func clock(v any) string {
	ms, ok := v.(float64)
	if !ok || ms < 0 {
		return "—"
	}
	total := int64(ms / 1000)
	h, m, s := total/3600, total%3600/60, total%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

// deliveryFaults are what a webhook delivery's error means to a reader, by the text the
// dispatcher (webhook/dispatcher.go) or Go's network stack puts in it; the first that
// matches names it. The API gives only the raw text, which the page keeps one click away.
var deliveryFaults = []struct{ in, summary string }{
	{"no such host", "The host could not be resolved"},
	{"server misbehaving", "The host could not be resolved"},
	{"connection refused", "The connection was refused"},
	{"connection reset", "The connection was reset"},
	{"no answer within", "Timed out"},
	{"i/o timeout", "Timed out"},
	{"SSRF guard", "Refused: the URL leads to an internal address"},
	{"redirect", "Answered with a redirect, which is not followed"},
	{"x509:", "TLS failed: the certificate was not accepted"},
	{"tls:", "TLS failed"},
	{"certificate", "TLS failed: the certificate was not accepted"},
	{"secret cannot be used", "The webhook's secret cannot be used"},
	{"URL cannot be used", "The webhook's URL cannot be used"},
}

// fault is an error in words, with the raw text it came from ("" when it says no more).
type fault struct{ Summary, Detail string }

// deliveryFault summarizes a delivery's error for people: "The host could not be
// resolved" for "dial tcp: lookup x on 127.0.0.53:53: no such host", "HTTP 503 Service
// Unavailable" for an answer's status. The raw text, when it says more, is the detail.
func deliveryFault(v any) fault {
	raw := str(v)
	var status int
	if _, err := fmt.Sscanf(raw, "the receiver answered HTTP %d", &status); err == nil {
		return fault{Summary: strings.TrimSpace(fmt.Sprintf("HTTP %d %s", status, http.StatusText(status)))}
	}
	for _, f := range deliveryFaults {
		if strings.Contains(raw, f.in) {
			return fault{f.summary, raw}
		}
	}
	return fault{"Not delivered", raw}
}
