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

// TestPullYAMLKeepsEveryCharacter: texts holding characters JSON leaves raw but a YAML
// reader refuses (DEL, C1 controls, U+FFFE, U+FFFF) or reads as a line break (NEL) are
// pulled and read back as they are (FuzzPullReadsBack: a name holding DEL failed pull).
func TestPullYAMLKeepsEveryCharacter(t *testing.T) {
	for _, s := range []string{"a\x7fb", "\u0080", "a\u0085b", "\u009f", "\ufffe\uffff", "\ufeffbom", "é😀\u2028", "plain"} {
		y, err := pullYAML(map[string]any{"name": s})
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		tree, err := readYAML(y)
		back, _ := tree.(map[string]any)
		if err != nil || back["name"] != s {
			t.Errorf("%q read back as %q (%v) from\n%s", s, back["name"], err, y)
		}
	}
}
