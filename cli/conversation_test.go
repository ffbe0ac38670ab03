package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
)

// TestConversationList: `voiceapi conversation list` prints the conversations newest
// first, by agent (its name) and status, as a table or NDJSON without their messages.
func TestConversationList(t *testing.T) {
	s, stand := chatServer(t)
	stand.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	agent := deskAgent(t, s, stand)
	ctx := context.Background()
	start := data.ConversationStart{Version: data.ConversationVersion{Draft: true}}
	first, err := s.c.Conversations.Start(ctx, agent.ID, start)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.c.Conversations.Start(ctx, agent.ID, start)
	if err != nil {
		t.Fatal(err)
	}
	call, err := s.c.Conversations.End(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	remote := []string{"--server", s.url, "--token", s.token}
	out, _, err := run(t, "", append([]string{"conversation", "list"}, remote...)...)
	if err != nil || !strings.Contains(out, "ID  ") || strings.Index(out, second.ID) > strings.Index(out, first.ID) || strings.Index(out, second.ID) < 0 ||
		!strings.Contains(out, call.ID) || !strings.Contains(out, "draft") {
		t.Errorf("conversation list: %v\n%s", err, out)
	}
	out, _, err = run(t, "", append([]string{"conversation", "list", "--agent", "Desk", "--status", "active", "--json"}, remote...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 1 || !strings.Contains(lines[0], `"id":"`+second.ID+`"`) || strings.Contains(lines[0], `"messages"`) {
		t.Errorf("conversation list --agent Desk --status active --json: %v\n%s", err, out)
	}
	if _, _, err := run(t, "", append([]string{"conversation", "list", "--status", "open"}, remote...)...); err == nil || !strings.Contains(err.Error(), "status") {
		t.Errorf("--status open: %v", err)
	}
}
