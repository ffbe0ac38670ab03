package cli

import (
	"testing"
)

// TestEnvRefEscapes: ${env:NAME} reads the variable; each further dollar in front escapes
// it (one dollar fewer, no variable read); pull's escape reads back as the text it
// escaped (FuzzPullReadsBack found a prompt holding ${env:NAME} pulled as a reference).
func TestEnvRefEscapes(t *testing.T) {
	t.Setenv("IAC_ESCAPE_X", "value")
	cases := []struct{ in, want string }{
		{"${env:IAC_ESCAPE_X}", "value"},
		{"a ${env:IAC_ESCAPE_X} b", "a value b"},
		{"$${env:IAC_ESCAPE_X}", "${env:IAC_ESCAPE_X}"},
		{"$$${env:IAC_ESCAPE_X}", "$${env:IAC_ESCAPE_X}"},
		{"$$${env:IAC_SURELY_UNSET}", "$${env:IAC_SURELY_UNSET}"},
		{"costs $5, ${env:}", "costs $5, ${env:}"},
		{"$ {env:IAC_ESCAPE_X} $$", "$ {env:IAC_ESCAPE_X} $$"},
	}
	for _, c := range cases {
		d := &desired{}
		got, err := d.substitute(c.in, ".f")
		if err != nil || got != c.want {
			t.Errorf("substitute(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if back, err := d.substitute(escapeEnvRefs(c.in), ".f"); err != nil || back != c.in {
			t.Errorf("substitute(escapeEnvRefs(%q)) = %q, %v; want it back", c.in, back, err)
		}
	}
}
