package cli

import "testing"

// TestPlural: a count the CLI writes agrees with its noun, never "change(s)".
func TestPlural(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{plural(0, "change"), "0 changes"},
		{plural(1, "change"), "1 change"},
		{plural(2, "change"), "2 changes"},
		{plural(int64(1), "knowledge base"), "1 knowledge base"},
		{plural(int64(12), "knowledge base"), "12 knowledge bases"},
		{plural(-1, "minute"), "-1 minutes"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
