package server

import "testing"

// A CSV cell a spreadsheet would evaluate gets a quote in front; a phone number in E.164
// form and a plain number (a negative analysis figure) are left as they are, since they
// hold no formula and a quote would spoil their most common values.
func TestInertCell(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"user_hangup", "user_hangup"},
		{"+14155550123", "+14155550123"},
		{"-5", "-5"},
		{"-2.5", "-2.5"},
		{"-1e3", "-1e3"},
		{"+3", "+3"},
		{"-2+3", "'-2+3"},
		{"-", "'-"},
		{"+", "'+"},
		{"-e", "'-e"},
		{"=1+1", "'=1+1"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"},
		{"-Inf", "'-Inf"},
		{"\tx", "'\tx"},
	}
	for _, c := range cases {
		if got := inertCell(c.in); got != c.want {
			t.Errorf("inertCell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
