package service

import (
	"strings"
	"testing"
)

// Export keys are readable slugs of the names, unique within their list, never empty,
// and at most 48 characters before a -N suffix.
func TestExportKeys(t *testing.T) {
	long := strings.Repeat("a", 47) + "bc"
	cases := []struct {
		names []string
		want  []string
	}{
		{[]string{"Support bot"}, []string{"support-bot"}},
		{[]string{"  Support -- bot!  "}, []string{"support-bot"}},
		{[]string{"Support bot", "support BOT", "Support-bot"}, []string{"support-bot", "support-bot-2", "support-bot-3"}},
		{[]string{"", "!!!", "Ünïcode"}, []string{"agent", "agent-2", "n-code"}},
		{[]string{strings.Repeat("a", 48)}, []string{strings.Repeat("a", 48)}},
		{[]string{long}, []string{strings.Repeat("a", 47) + "b"}},
	}
	for _, c := range cases {
		km := keyMaker{}
		for i, name := range c.names {
			if got := km.key(name, "agent"); got != c.want[i] {
				t.Errorf("key(%q) after %q = %q, want %q", name, c.names[:i], got, c.want[i])
			}
		}
	}
}
