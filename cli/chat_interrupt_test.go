package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestChatInterrupt: Ctrl-C (a real SIGINT to the process) ends `voiceapi chat` as /end
// does: the conversation ends on the server, its call is printed, and the exit status is
// 130; both while it waits for a line and while a reply streams (the end then waits for
// the server to let go of the cut reply).
func TestChatInterrupt(t *testing.T) {
	s := newTestServer(t)
	asked, release := make(chan struct{}, 1), make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the stand-in closes: it waits for its handlers
	s.stand.Respond(func(r llmtest.Request) llmtest.Reply {
		if r.LastUserText() == "slow" {
			asked <- struct{}{}
			<-release
		}
		return llmtest.Text("Noted: " + r.LastUserText())
	})
	var cfg map[string]any
	json.Unmarshal([]byte(s.llmConfig()), &cfg)
	agent := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Desk", "llm_config": cfg}).Data()["id"].(string)

	for _, c := range []struct {
		name, line string
		before     func(out *testkit.SyncBuffer)
	}{
		{"waiting for a line", "hello", func(out *testkit.SyncBuffer) {
			waitFor(t, "the reply", func() bool { return strings.Contains(out.String(), "agent: Noted: hello\n") })
		}},
		{"during a reply", "slow", func(*testkit.SyncBuffer) { <-asked }},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, typing := io.Pipe()
			defer typing.Close()
			out := &testkit.SyncBuffer{}
			root := cli.NewRootCommand(out, out)
			root.SetIn(cli.TerminalInput{Reader: in}) // a terminal: a "you> " prompt before each line
			root.SetArgs([]string{"chat", agent, "--draft", "--server", s.URL, "--token", s.Owner.Token})
			errc := make(chan error, 1)
			go func() { errc <- root.ExecuteContext(context.Background()) }()
			waitFor(t, "the conversation", func() bool { return strings.Contains(out.String(), "Type /end to finish.") })
			if _, err := io.WriteString(typing, c.line+"\n"); err != nil {
				t.Fatal(err)
			}
			c.before(out)
			if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-errc:
			case <-time.After(30 * time.Second):
				t.Fatalf("chat did not end after Ctrl-C:\n%s", out)
			}
			if cli.ExitCode(err) != 130 {
				t.Errorf("exit status %d (%v), want 130", cli.ExitCode(err), err)
			}
			// The end is on a line of its own, not after the prompt the terminal echoed ^C on.
			m := regexp.MustCompile(`Conversation (conv_\w+) .*\n(?s:.*)\nThe conversation ended \(user_ended\): call (call_\w+)\n$`).FindStringSubmatch(out.String())
			if m == nil || !strings.Contains(out.String(), "you> ") {
				t.Fatalf("output:\n%s", out)
			}
			if conv := s.Do("GET", "/api/v1/conversations/"+m[1], s.Owner.Token, nil).Data(); conv["status"] != "ended" || conv["call_id"] != m[2] {
				t.Errorf("the conversation on the server: %v", conv)
			}
		})
	}
}
