package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
)

// conversationsExample is the working example of docs/conversations.md: the sh block
// that creates the agent, talks to it and ends the conversation.
var conversationsExample = regexp.MustCompile("(?s)## A working example with a local model\n.*?```sh\n(API=.*?)```\n")

// TestConversationsExampleRuns runs docs/conversations.md's working example as written,
// against a real server whose model is the OpenAI-compatible stand-in in place of Ollama
// (its address and the server's are the only words changed), and checks what each jq of
// the example prints: a first-hour reader copies these lines, and a jq path that misses
// the answer's data prints nulls without failing (the end printed {"id": null, …}).
func TestConversationsExampleRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the example needs %s (CI=true: not skipping)", tool)
			}
			t.Skipf("the example needs %s: not found", tool)
		}
	}
	raw, err := os.ReadFile("docs/conversations.md")
	if err != nil {
		t.Fatal(err)
	}
	m := conversationsExample.FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatal("docs/conversations.md has no working example (a sh block starting API= under its heading)")
	}
	model := llmtest.New(t, data.LLMInternal)
	model.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("Your bill is in your room.") })

	tmp := t.TempDir()
	bin := filepath.Join(tmp, "voiceapi")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv, stdout := startServer(t, bin, filepath.Join(tmp, "data"), "--allow-url-prefix", model.URL+"/")
	script := strings.NewReplacer("http://127.0.0.1:11434/v1", model.BaseURL(), "http://127.0.0.1:8080", srv.url).Replace(m[1])

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -eo pipefail\n"+script)
	cmd.Env = append(os.Environ(), "TOKEN="+bootstrapToken(t, stdout))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the example failed: %v\n%s", err, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`"role": "user",\s*"content": "I have a question about my bill"`),
		regexp.MustCompile(`"role": "agent",\s*"content": "Your bill is in your room."`),
		regexp.MustCompile(`event: done`),
		regexp.MustCompile(`"id": "call_\w+",\s*"direction": "web",\s*"disconnection_reason": "user_ended"`),
	} {
		if !want.Match(out) {
			t.Errorf("the example's output lacks %s:\n%s", want, out)
		}
	}
}
