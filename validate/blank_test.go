package validate_test

import (
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// TestBlankStringIsNotReportedAsMissing: a string given as white space only is told it
// must not be blank, one message for every blank string; only an empty (missing) one is
// required (or required when its condition holds). A conversation message's content, a
// campaign's name, a webhook's url, a text source's content and a conditional string, at
// the edge: one non-space character passes the rule.
func TestBlankStringIsNotReportedAsMissing(t *testing.T) {
	message := func(s string) error { return validate.ConversationMessage(data.ConversationMessage{Content: s}) }
	name := func(s string) error { return validate.CampaignSettings(data.CampaignCreate{Name: s}) }
	webhookURL := func(s string) error {
		var errs validate.Errors
		validate.WebhookURL(&errs, "url", s)
		return errs.Err()
	}
	text := func(s string) error {
		return validate.KnowledgeBaseCreate(data.KnowledgeBaseCreate{Name: "kb", Texts: []data.TextInput{{Content: s}}}, nil)
	}
	whenStatic := func(s string) error { // a string required only under a condition
		var errs validate.Errors
		errs.NotBlankWhen("welcome_message", s, "welcome_message_type is static")
		return errs.Err()
	}
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
		{"url", webhookURL, "", "The url field is required."},
		{"url", webhookURL, " \t", "The url field must not be blank."},
		{"texts.0.content", text, "", "The texts.0.content field is required."},
		{"texts.0.content", text, "  ", "The texts.0.content field must not be blank."},
		{"texts.0.content", text, "x", ""},
		{"welcome_message", whenStatic, "", "The welcome_message field is required when welcome_message_type is static."},
		{"welcome_message", whenStatic, " ", "The welcome_message field must not be blank."},
		{"welcome_message", whenStatic, "Hi", ""},
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
