package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
)

// iacServer is a real server over bbolt in a temporary directory, with an owner's token
// and a client of it.
type iacServer struct {
	url, token string
	c          *client.Client
}

func newIACServer(t *testing.T, wrap ...func(http.Handler) http.Handler) *iacServer {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := bolt.Open(t.TempDir(), bolt.Options{PasswordCost: bcrypt.MinCost, NoSync: true, Logger: logger, SecretKey: bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	h := NewServer(db, logger, func(c *server.Config) { c.AllowPrivateURLs = true }).Handler()
	for _, w := range wrap {
		h = w(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); db.Close() })
	token, c := ownerClient(t, NewServices(db), srv.URL, "iac")
	return &iacServer{url: srv.URL, token: token, c: c}
}

// cmd runs plan, apply or pull against the server and returns stdout and the error.
func (s *iacServer) cmd(t *testing.T, verb string, args ...string) (string, error) {
	t.Helper()
	out, errOut, err := run(t, "", append([]string{verb, "--server", s.url, "--token", s.token}, args...)...)
	if err != nil && !errors.Is(err, ErrChangesPlanned) && !strings.Contains(errOut, err.Error()) {
		t.Errorf("the error is not printed: %q", errOut)
	}
	return out, err
}

// writeFiles writes name → content into a new directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const iacKB = `knowledge_bases:
  - name: Help
    texts:
      - title: hours
        content: We are open from nine to five on weekdays.
    urls: [https://example.com/faq]
    files: [docs/refunds.md]
`

const iacAgent = `agents:
  - name: Support
    knowledge_bases: [Help]
    call_config:
      ring_duration_ms: 20000
    llm_config:
      provider: mistral
      model: mistral-large-latest
      temperature: 0.5
      api_key: ${env:IAC_TEST_KEY}
      tools:
        - name: hang_up
          type: end_call
    prompt_config:
      prompt: You answer questions about opening hours.
      first_speaker: ai
      welcome_message_type: static
      welcome_message: Hello, Help desk here.
    stt_config: {provider: deepgram, model: nova-3}
    tts_config: {provider: elevenlabs, model: eleven_flash_v2_5, voice_id: JBFqnCBsd6RMkjVDRZzb}
    knowledge_base_config: {chunks_to_retrieve: 4}
`

const iacRest = `numbers:
  - phone_number: "+14155550100"
    nickname: front desk
    provider: twilio
    inbound_agent: Support
webhooks:
  - url: https://example.com/hooks/voice
    events: [call.ended]
    description: CRM sync
`

func iacDir(t *testing.T, agent string) string {
	return writeFiles(t, map[string]string{
		"kb.yaml": iacKB, "agents/support.yaml": agent, "rest.json": yamlAsJSON(t, iacRest),
		"docs/refunds.md": "# Refunds\n\nRefunds take fourteen days.\n",
	})
}

// yamlAsJSON shows that JSON state files work: the numbers and webhooks go as JSON.
func yamlAsJSON(t *testing.T, y string) string {
	t.Helper()
	return `{"numbers":[{"phone_number":"+14155550100","nickname":"front desk","provider":"twilio","inbound_agent":"Support"}],` +
		`"webhooks":[{"url":"https://example.com/hooks/voice","events":["call.ended"],"description":"CRM sync"}]}`
}

// ownerClient makes the instance's owner (an administrator) in svc, an API key of theirs
// named keyName in their personal workspace, and a client of the server at url with it.
func ownerClient(t *testing.T, svc *service.Services, url, keyName string) (string, *client.Client) {
	t.Helper()
	ctx := context.Background()
	u, err := svc.Users.CreateUser(ctx, data.UserCreate{Name: "Owner", Email: "owner@example.com", Password: "owner-password", IsAdmin: true})
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := svc.Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: keyName})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(url, client.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	return token, c
}
