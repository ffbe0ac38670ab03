package validate

import (
	"net/url"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestStateFilterParams: the recipient list's state and the run list's status take
// each of their values, and nothing else: not empty, not another case, not several
// (comma-separated; repeated ones KnownQuery refuses before: docs/api.md); a fault names
// the parameter and lists the values. The service's own check (RecipientFilter,
// TestRunFilter, for callers other than the query string) agrees.
func TestStateFilterParams(t *testing.T) {
	type parsed struct {
		value string
		err   error
	}
	for _, c := range []struct {
		name    string
		allowed []string
		params  func(url.Values) parsed
		check   func(string) error
	}{
		{"state", data.RecipientStates, func(q url.Values) parsed {
			f, err := RecipientFilterParams(q)
			return parsed{f.State, err}
		}, func(v string) error { return RecipientFilter(data.RecipientFilter{State: v}) }},
		{"status", data.TestRunStatuses, func(q url.Values) parsed {
			f, err := TestRunFilterParams(q)
			return parsed{f.Status, err}
		}, func(v string) error { return TestRunFilter(data.TestRunFilter{Status: v}) }},
	} {
		if p := c.params(url.Values{}); p.err != nil || p.value != "" {
			t.Errorf("%s absent: %q %v, want no filter", c.name, p.value, p.err)
		}
		for _, v := range c.allowed {
			if p := c.params(url.Values{c.name: {v}}); p.err != nil || p.value != v {
				t.Errorf("%s=%s: %q %v", c.name, v, p.value, p.err)
			}
			if err := c.check(v); err != nil {
				t.Errorf("%s %s, checked: %v", c.name, v, err)
			}
		}
		want := "The selected " + c.name + " is invalid; it must be one of: " + strings.Join(c.allowed, ", ") + "."
		for _, bad := range []string{"", "unknown", strings.ToUpper(c.allowed[0]), c.allowed[0] + "," + c.allowed[1], " " + c.allowed[0]} {
			p := c.params(url.Values{c.name: {bad}})
			if msgs := fieldMessages(p.err, c.name); len(msgs) != 1 || msgs[0] != want {
				t.Errorf("%s=%q: %v, want %q", c.name, bad, p.err, want)
			}
			if bad != "" && fieldMessages(c.check(bad), c.name) == nil {
				t.Errorf("%s %q passed the service's check", c.name, bad)
			}
		}
	}
}

// fieldMessages are err's messages on path (nil when err names no such field).
func fieldMessages(err error, path string) []string {
	e, ok := err.(*data.Error)
	if !ok {
		return nil
	}
	return e.Fields[path]
}
