package data

import "testing"

func TestNumberMatches(t *testing.T) {
	n := &Number{PhoneNumber: "+14155550123", Nickname: "Front Desk"}
	for _, c := range []struct {
		q    string
		want bool
	}{
		{"", true},
		{"4155", true},
		{"+1 415", true},
		{"(415) 555-01", true},
		{"415.555", true},
		{"front", true},
		{"DESK", true},
		{"999", false},
		{"back", false},
		{"415x", false}, // not written as a number, and no nickname holds it
	} {
		if got := NumberMatches(n, c.q); got != c.want {
			t.Errorf("NumberMatches(%q) = %v, want %v", c.q, got, c.want)
		}
	}
}
