package validate_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/netguard"
	"github.com/voiceapi/voiceapi/validate"
)

// TestWebhookURLFormMatchesGuard: the validator's word on a URL's form is the outbound
// guard's (netguard.CheckURL), so a webhook's message names the form rule, not the guard's
// (a URL ending in U+00A0 or U+0085 passed the form and was refused only by the guard).
func TestWebhookURLFormMatchesGuard(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", validate.MaxWebhookURLLen-len("https://example.com/"))
	cases := []struct {
		url string
		ok  bool
	}{
		{"https://example.com/hook", true},
		{"http://example.com:8080/h?x=1", true},
		{long, true},
		{long + "a", false},
		{"https://example.com/\u00a0", false},
		{"\u2003https://example.com/", false},
		{"https://example.com/\u0085", false},
		{"https://example.com/a\u00a0b", true}, // inside the path: the guard takes it too
		{"https://example.com/a b", false},
		{"https://user:pw@example.com/", false},
		{"https://example.com:0/", false},
		{"https://example.com:65536/", false},
		{"ftp://example.com/", false},
		{"https:///a", false},
	}
	for _, c := range cases {
		var errs validate.Errors
		validate.WebhookURL(&errs, "url", c.url)
		form, guard := errs.Err() == nil, netguard.CheckURL(c.url) == nil
		if form != c.ok || guard != c.ok {
			t.Errorf("%.40q: form accepted %v, guard accepted %v, want %v", c.url, form, guard, c.ok)
		}
	}
}
