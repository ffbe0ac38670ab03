package validate

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestPatternRefusalsInWords: a says/not_says pattern the RE2 parser refuses is faulted on
// its field with the words of every other field error, never with the parser's text
// ("error parsing regexp: missing closing ): `(a`"); a pattern it reads is not faulted.
func TestPatternRefusalsInWords(t *testing.T) {
	cases := []struct{ pattern, want string }{
		{`(?i)\bbooked\b`, ""},
		{`(booked)`, ""},
		{`(booked`, "The criteria.0.pattern field is not a valid regular expression: a ( has no closing )."},
		{`booked)`, "a ) closes no ("},
		{`[ab`, "a [ has no closing ]"},
		{`[z-a]`, `a range in [ ] runs backwards or is not a range, at "z-a"`},
		{`booked\q`, `a backslash escape is not one RE2 knows, at "\q"`},
		{`booked\`, "it ends with a lone backslash"},
		{`*booked`, "a *, + or ? repeats nothing"},
		{`a**`, "two repetitions (such as ** or +*) follow each other"},
		{`a{1000}`, ""},
		{`a{1001}`, "a {n,m} repetition is out of order or over 1000"},
		{`sorry(?!x)`, "lookarounds such as (?= and (?! are not"},
		{"caf\xff", "it is not valid UTF-8"},
	}
	for _, c := range cases {
		x := validTest()
		x.Criteria = []data.Criterion{{Type: data.CriterionNotSays, Pattern: c.pattern}}
		got := fields(AgentTest(x, testTools))["criteria.0.pattern"]
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%q: refused: %v", c.pattern, got)
		case c.want == "":
		case len(got) != 1:
			t.Errorf("%q: %v, want one message with %q", c.pattern, got, c.want)
		case !strings.Contains(got[0], c.want) || strings.Contains(got[0], "parsing") || !strings.HasPrefix(got[0], "The criteria.0.pattern field is not a valid regular expression: "):
			t.Errorf("%q: %q, want it to say %q", c.pattern, got[0], c.want)
		}
	}
}
