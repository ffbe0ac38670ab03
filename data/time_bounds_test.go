package data

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTimeUnmarshalYears: a timestamp is taken only when MarshalJSON can write it back,
// in UTC in the years 0000 to 9999 (RFC 3339's four digits); an offset that carries it
// past either edge is refused, so no record stores a time it cannot read again.
func TestTimeUnmarshalYears(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{`"9999-12-31T23:59:59.999Z"`, true},
		{`"9999-12-31T23:59:59.999-00:00"`, true},
		{`"9999-12-31T23:59:59.999-00:01"`, false}, // 10000-01-01T00:00:59.999Z
		{`"9999-12-31T23:00:00-05:00"`, false},
		{`"0000-01-01T00:00:00Z"`, true},
		{`"0000-01-01T00:00:00+00:00"`, true},
		{`"0000-01-01T00:00:00+00:01"`, false}, // -0001-12-31T23:59:00Z
		{`"2026-03-09T13:00:00+14:00"`, true},
	}
	for _, c := range cases {
		var v Time
		err := json.Unmarshal([]byte(c.in), &v)
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want accepted %v", c.in, err, c.ok)
			continue
		}
		if err != nil {
			continue
		}
		out, _ := json.Marshal(v)
		var back Time
		if err := json.Unmarshal(out, &back); err != nil || !back.Equal(v.Time) {
			t.Errorf("%s: written back as %s, read again as %v (%v)", c.in, out, back, err)
		}
	}
}

// TestTimeUnmarshalSaysTheForm: a date, or a word, is refused with an example of the form
// a timestamp takes, so the 422 tells the user what to send.
func TestTimeUnmarshalSaysTheForm(t *testing.T) {
	for _, in := range []string{`"2026-11-01"`, `"tomorrow"`, `"2026-11-01 10:00:00"`} {
		var v Time
		err := json.Unmarshal([]byte(in), &v)
		if err == nil || !strings.Contains(err.Error(), "2026-11-21T10:04:05Z") {
			t.Errorf("%s: %v, want a refusal showing the form", in, err)
		}
	}
}
