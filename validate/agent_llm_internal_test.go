package validate

import "testing"

// FuzzNameForms holds the hand-written checks of tool, variable and header names to the
// regular expressions that define them.
func FuzzNameForms(f *testing.F) {
	for _, s := range []string{"", "a", "_x-1", "1a", "-", "a b", "é", "X-Customer-Id", "a:b", "!#$%&'*+.^_`|~", "a\x00", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validName(s), nameRe.MatchString(s); got != want {
			t.Fatalf("validName(%q) = %v, nameRe %v", s, got, want)
		}
		if got, want := validHeaderName(s), headerNameRe.MatchString(s); got != want {
			t.Fatalf("validHeaderName(%q) = %v, headerNameRe %v", s, got, want)
		}
	})
}
