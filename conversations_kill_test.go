package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
)

// TestOpenConversationsSurviveKill: a workspace's open conversations are counted from
// what each start and end wrote, in their own transactions, not from a process's memory:
// a server SIGKILLed right after acknowledging two starts, an end and a third start, at
// its bound of two, refuses the next start once started again on the same data (bbolt,
// or PostgreSQL with VOICEAPI_TEST_BACKEND=postgres), and takes one after an end.
func TestOpenConversationsSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it")
	}
	bin := voiceapiBinary(t)
	model := llmtest.New(t, data.LLMInternal)
	model.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	dataDir := filepath.Join(t.TempDir(), "data")
	flags := []string{"--allow-private-urls", "--rate-limit", "0", "--max-open-conversations", "2"}
	srv, stdout := startServer(t, bin, dataDir, flags...)
	api := killAPI{hc: &http.Client{Timeout: 20 * time.Second}, token: bootstrapToken(t, stdout)}
	raw, _ := json.Marshal(model.LLMConfig())
	var llmConfig map[string]any
	json.Unmarshal(raw, &llmConfig)
	agent := api.data(t, srv.url, "POST", "/api/v1/agents", map[string]any{"name": "Kitchen", "llm_config": llmConfig})["id"].(string)
	start := "/api/v1/agents/" + agent + "/conversations"
	draft := map[string]any{"version": "draft"}
	first := api.data(t, srv.url, "POST", start, draft)["id"].(string)
	second := api.data(t, srv.url, "POST", start, draft)["id"].(string)
	api.data(t, srv.url, "POST", "/api/v1/conversations/"+first+"/end", nil)
	api.data(t, srv.url, "POST", start, draft) // the second and this one are open: the bound
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.cmd.Wait()

	srv, _ = startServer(t, bin, dataDir, flags...)
	if status, body := killTestDo(t, api.hc, "POST", srv.url+start, api.token, draft); status != 409 {
		t.Errorf("a start at the bound after the kill: %d %s, want 409", status, body)
	}
	api.data(t, srv.url, "POST", "/api/v1/conversations/"+second+"/end", nil)
	if status, body := killTestDo(t, api.hc, "POST", srv.url+start, api.token, draft); status != 201 {
		t.Errorf("a start once one ended: %d %s, want 201", status, body)
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()
}
