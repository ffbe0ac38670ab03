package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

// chatServer is a real server whose conversations reach the internal model stand-in,
// allowed through the SSRF guard by its prefix, with an owner's token.
func chatServer(t *testing.T) (*iacServer, *llmtest.Server) {
	t.Helper()
	return chatServerWith(t, nil)
}

// chatServerWith is chatServer with wrap (when not nil) in front of the server's handler.
func chatServerWith(t *testing.T, wrap func(http.Handler) http.Handler) (*iacServer, *llmtest.Server) {
	t.Helper()
	stand := llmtest.New(t, data.LLMInternal)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := bolt.Open(t.TempDir(), bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, Logger: logger, SecretKey: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	svc := NewServices(db)
	svc.Conversations.Configure(ConversationOptions(LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}))
	handler := NewServerOn(db, svc, logger).Handler()
	if wrap != nil {
		handler = wrap(handler)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(func() { srv.Close(); db.Close() })
	token, c := ownerClient(t, svc, srv.URL, "chat")
	return &iacServer{url: srv.URL, token: token, c: c}, stand
}

// deskAgent creates a draft agent named Desk on the stand-in's model.
func deskAgent(t *testing.T, s *iacServer, stand *llmtest.Server) *data.Agent {
	t.Helper()
	cfg := stand.LLMConfig()
	name := "Desk"
	agent, _, err := s.c.Agents.Create(context.Background(), client.AgentInput{Name: &name, LLMConfig: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	return agent
}

func TestChat(t *testing.T) {
	s, stand := chatServer(t)
	cfg := stand.LLMConfig()
	cfg.Tools = []*data.Tool{{Name: "press", Type: data.ToolPressIVR}, {Name: "bye", Type: data.ToolEndCall}}
	name := "Front desk"
	prompt := data.DefaultAgentConfig().PromptConfig
	prompt.WelcomeMessage = "Hi {{guest}}, welcome to {{hotel}}."
	agent, _, err := s.c.Agents.Create(context.Background(), client.AgentInput{Name: &name, LLMConfig: &cfg, PromptConfig: &prompt})
	if err != nil {
		t.Fatal(err)
	}
	stand.Respond(func(r llmtest.Request) llmtest.Reply {
		switch {
		case r.LastUserText() == "press one" && len(r.ToolResults()) == 0:
			return llmtest.Calls(llm.ToolCall{Name: "press", Arguments: `{"digits":"1"}`})
		case r.LastUserText() == "goodbye":
			return llmtest.Reply{Text: "Bye now.", ToolCalls: []llm.ToolCall{{Name: "bye", Arguments: `{}`}}}
		}
		return llmtest.Text("Noted: " + r.LastUserText())
	})
	base := []string{"chat", name, "--server", s.url, "--token", s.token, "--draft", "--var", "guest=Ada", "--var", "hotel=Grand"}
	out, _, err := run(t, "hello there\n\npress one\n/end\nnot sent\n", base...)
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	for _, want := range []string{
		"Conversation conv_", "with Front desk (draft)",
		"agent: Hi Ada, welcome to Grand.\n",
		"agent: Noted: hello there\n", "ms to the first token",
		`[tool] press({"digits":"1"}) → {"digits":"1","note":"a text conversation presses no keys","recorded":true}`,
		"agent: Noted: press one\n",
		"The conversation ended (user_ended): call call_",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not sent") {
		t.Errorf("a line after /end was sent:\n%s", out)
	}
	// The agent ends it: the command says so and stops.
	out, _, err = run(t, "goodbye\nstill here?\n", append(base[:2:2], "--server", s.url, "--token", s.token, "--draft", "--var", "guest=Bo", "--var", "hotel=Inn")...)
	if err != nil || !strings.Contains(out, "agent: Bye now.\n") || !strings.Contains(out, "The conversation ended (agent_ended): call call_") {
		t.Errorf("agent_ended: %v\n%s", err, out)
	}
	// Bad input: a variable missing, an unknown agent, both --draft and --version.
	// The server's refusals speak of the API's members; the command adds its own flags.
	if _, _, err := run(t, "", "chat", agent.ID, "--server", s.url, "--token", s.token, "--draft"); err == nil || !strings.Contains(err.Error(), "guest") || !strings.Contains(err.Error(), "--var NAME=VALUE") {
		t.Errorf("a missing variable: %v", err)
	}
	if _, _, err := run(t, "", "chat", "Nobody", "--server", s.url, "--token", s.token); err == nil || !strings.Contains(err.Error(), `no agent is named "Nobody"`) {
		t.Errorf("an unknown agent: %v", err)
	}
	if _, _, err := run(t, "", "chat", agent.ID, "--server", s.url, "--token", s.token, "--draft", "--version", "2"); err == nil {
		t.Error("--draft with --version was accepted")
	}
	// Live on an agent never published: the server's 409, said plainly.
	if _, _, err := run(t, "", "chat", agent.ID, "--server", s.url, "--token", s.token, "--var", "guest=A", "--var", "hotel=B"); err == nil || !strings.Contains(err.Error(), "no published version") || !strings.Contains(err.Error(), "--draft") {
		t.Errorf("live without a published version: %v", err)
	}
}

// TestChatLongLine: a line of standard input longer than chat reads (1 MiB) ends the
// conversation as the end of input does, its call printed, and the command fails
// saying why; before, the conversation was left open until it expired.
func TestChatLongLine(t *testing.T) {
	s, stand := chatServer(t)
	agent := deskAgent(t, s, stand)
	stand.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("Noted.") })
	out, _, err := run(t, "hello\n"+strings.Repeat("x", maxChatLine+1)+"\n", "chat", agent.ID, "--draft", "--server", s.url, "--token", s.token)
	if err == nil || err.Error() != "standard input has a line longer than 1 MiB: the conversation ended there" {
		t.Errorf("error %v", err)
	}
	if !strings.Contains(out, "agent: Noted.\n") || !strings.Contains(out, "The conversation ended (user_ended): call call_") {
		t.Errorf("output:\n%s", out)
	}
}

// TestChatStopsWhenRefusedForGood: a message refused as every later one would be (here
// its agent deleted while it was answered: 404) stops the chat, which still ends the
// conversation and fails saying why; before, each later line was sent and refused in
// turn and the command ended with success.
func TestChatStopsWhenRefusedForGood(t *testing.T) {
	s, stand := chatServer(t)
	agent := deskAgent(t, s, stand)
	var answered atomic.Int32
	stand.Respond(func(r llmtest.Request) llmtest.Reply {
		answered.Add(1)
		if r.LastUserText() == "delete it" {
			if err := s.c.Agents.Delete(context.Background(), agent.ID); err != nil {
				t.Errorf("deleting the agent: %v", err)
			}
		}
		return llmtest.Text("Noted.")
	})
	out, _, err := run(t, "hello\ndelete it\nstill there?\nand now?\n", "chat", agent.ID, "--draft", "--server", s.url, "--token", s.token)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != data.ENOTFOUND {
		t.Fatalf("the chat ended with %v, want the not_found of the message answered after the delete\n%s", err, out)
	}
	if strings.Contains(out, "\n! ") {
		t.Errorf("later lines were sent and refused one by one:\n%s", out)
	}
	if !strings.Contains(out, "agent: Noted.\n") || !strings.Contains(out, "The conversation ended (user_ended): call call_") {
		t.Errorf("output:\n%s", out)
	}
	if n := answered.Load(); n != 2 {
		t.Errorf("the model answered %d messages, want 2 (hello, delete it)", n)
	}
}

func TestChatVariables(t *testing.T) {
	got, err := chatVariables([]string{"a=1", "b=true", "c=+1555", "d=x=y", "e=", "f=2.5", "g=false", "h=007"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": json.Number("1"), "b": true, "c": "+1555", "d": "x=y", "e": "", "f": json.Number("2.5"), "g": false, "h": "007"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	if _, err := chatVariables([]string{"novalue"}); err == nil {
		t.Error("an item without = was accepted")
	}
}

// TestEndConversationWaitsForACutReply: the end after Ctrl-C cut a reply short asks
// again while the server still answers 409 (the cut reply holds the conversation for a
// moment), and gets the call once it is let go.
func TestEndConversationWaitsForACutReply(t *testing.T) {
	var ends atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/conversations/conv_1/end" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if ends.Add(1) <= 2 {
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"message":"A message of this conversation is being answered: wait for its reply.","code":"conflict"}`)
			return
		}
		io.WriteString(w, `{"data":{"id":"call_1","disconnection_reason":"user_ended"}}`)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, client.WithToken("1|x"))
	if err != nil {
		t.Fatal(err)
	}
	call, err := endConversation(context.Background(), c, "conv_1")
	if err != nil || call.ID != "call_1" || ends.Load() != 3 {
		t.Errorf("call %+v, error %v after %d end(s)", call, err, ends.Load())
	}
}
