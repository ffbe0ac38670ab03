package validate_test

import (
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// TestBlankStringIsNotReportedAsMissing: a string given as white space only is told it
// must not be blank, one message for every blank string; only an empty (missing) one is
// required. A conversation message's content and a campaign's name, at the edge: one
// non-space character passes the rule.
func TestBlankStringIsNotReportedAsMissing(t *testing.T) {
	message := func(s string) error { return validate.ConversationMessage(data.ConversationMessage{Content: s}) }
	name := func(s string) error { return validate.CampaignSettings(data.CampaignCreate{Name: s}) }
	for _, c := range []struct {
		field string
		check func(string) error
		in    string
		want  string // "" when the field passes
	}{
		{"content", message, "", "The content field is required."},
		{"content", message, " ", "The content field must not be blank."},
		{"content", message, "   ", "The content field must not be blank."},
		{"content", message, "\t\n\u00a0", "The content field must not be blank."},
		{"content", message, "a", ""},
		{"content", message, " a ", ""},
		{"name", name, "", "The name field is required."},
		{"name", name, "  ", "The name field must not be blank."},
		{"name", name, "n", ""},
	} {
		var got []string
		if e, ok := c.check(c.in).(*data.Error); ok {
			got = e.Fields[c.field]
		}
		if c.want == "" && len(got) != 0 || c.want != "" && !slices.Equal(got, []string{c.want}) {
			t.Errorf("%s %q: %q, want %q", c.field, c.in, got, c.want)
		}
	}
}
