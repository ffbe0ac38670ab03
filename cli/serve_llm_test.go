package cli

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/netguard"
	"github.com/voiceapi/voiceapi/validate"
)

func TestServeLLMFlags(t *testing.T) {
	ok := llmFlags{baseURLs: []string{"groq=https://gateway.example.com/groq/v1", "internal=http://127.0.0.1:11434/v1"},
		timeout: 30 * time.Second}
	s, err := ok.settings(netguard.Guard{AllowURLPrefixes: []string{"http://127.0.0.1:11434/"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.BaseURLs["groq"] != "https://gateway.example.com/groq/v1" || s.BaseURLs["internal"] != "http://127.0.0.1:11434/v1" || s.Timeout != 30*time.Second ||
		len(s.AllowURLPrefixes) != 1 {
		t.Errorf("settings = %+v", s)
	}
	for _, c := range []struct {
		f    llmFlags
		want string
	}{
		{llmFlags{baseURLs: []string{"openai=https://x.example.com"}, timeout: time.Second}, "PROVIDER one of"},
		{llmFlags{baseURLs: []string{"groq"}, timeout: time.Second}, "PROVIDER=URL"},
		{llmFlags{baseURLs: []string{"groq=ftp://x"}, timeout: time.Second}, "--llm-base-url groq"},
		{llmFlags{timeout: 0}, "--llm-timeout"},
	} {
		if _, err := c.f.settings(netguard.Guard{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %q", c.f, err, c.want)
		}
	}
	// serve refuses them before opening anything.
	if _, _, err := run(t, "", "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--llm-base-url", "nope"); err == nil || !strings.Contains(err.Error(), "--llm-base-url") {
		t.Errorf("serve with a bad --llm-base-url: %v", err)
	}
	if _, _, err := run(t, "", "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--allow-url-prefix", "http://h/?q=1"); err == nil || !strings.Contains(err.Error(), "--allow-url-prefix") {
		t.Errorf("serve with a bad --allow-url-prefix: %v", err)
	}
}

// TestServeMaxOpenConversations: --max-open-conversations defaults to
// data.DefaultMaxOpenConversations and reaches the conversations' options; 0 (no bound)
// and validate.MaxOpenConversations are taken, -1 and one past that refused before anything opens, from the flag or from its variable.
func TestServeMaxOpenConversations(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
		err  string
	}{
		{nil, data.DefaultMaxOpenConversations, ""},
		{[]string{"--max-open-conversations", "1"}, 1, ""},
		{[]string{"--max-open-conversations", "0"}, 0, ""},
		{[]string{"--max-open-conversations", "-1"}, 0, "--max-open-conversations must be 0"},
		{[]string{"--max-open-conversations", strconv.Itoa(validate.MaxOpenConversations)}, validate.MaxOpenConversations, ""},
		{[]string{"--max-open-conversations", strconv.Itoa(validate.MaxOpenConversations + 1)}, 0, "--max-open-conversations must be 0"},
	} {
		o := testServeOptions(t, t.TempDir(), c.args...)
		set, err := o.settings()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got := ConversationOptions(set.llm).MaxOpen; got != c.want {
			t.Errorf("%v: the conversations' MaxOpen = %d, want %d", c.args, got, c.want)
		}
	}
	t.Setenv("VOICEAPI_MAX_OPEN_CONVERSATIONS", "-1")
	if _, _, err := run(t, "", "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "--max-open-conversations") {
		t.Errorf("serve with VOICEAPI_MAX_OPEN_CONVERSATIONS=-1: %v", err)
	}
}
