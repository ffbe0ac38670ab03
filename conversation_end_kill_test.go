package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
)

// killEndConversations is how many conversations TestConversationEndSurvivesKill ends at
// once; the server is killed once killEndAcked ends were acknowledged.
const (
	killEndConversations = 40
	killEndAcked         = 10
	killEndCard          = "4111 1111 1111 1111"
)

// TestConversationEndSurvivesKill: in a workspace that redacts card numbers, 40
// conversations each answered one message holding a card (under an Idempotency-Key) are
// ended at once, and the server is SIGKILLed once 10 ends were acknowledged. Started
// again on the same data (bbolt, or PostgreSQL with VOICEAPI_TEST_BACKEND=postgres),
// each conversation is whole on one side of its end: an end that was acknowledged is
// there; an ended conversation shows its messages redacted, has its call (redacted, its
// transcript there) and its message's kept answer is gone (the retry is 409); an open
// one shows its messages as sent, has no call and its retry replays the kept answer.
// None is between.
func TestConversationEndSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it")
	}
	bin := voiceapiBinary(t)
	model := llmtest.New(t, data.LLMInternal)
	model.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("You said: " + r.LastUserText()) })
	dataDir := filepath.Join(t.TempDir(), "data")
	flags := []string{"--allow-private-urls", "--rate-limit", "0"}
	srv, stdout := startServer(t, bin, dataDir, flags...)
	api := killAPI{hc: &http.Client{Timeout: 20 * time.Second}, token: bootstrapToken(t, stdout)}
	raw, _ := json.Marshal(model.LLMConfig())
	var llmConfig map[string]any
	json.Unmarshal(raw, &llmConfig)
	agent := api.data(t, srv.url, "POST", "/api/v1/agents", map[string]any{"name": "Desk", "llm_config": llmConfig})
	api.data(t, srv.url, "PUT", "/api/v1/workspaces/"+agent["workspace_id"].(string), map[string]any{
		"privacy": map[string]any{"redaction": map[string]any{"detectors": []string{"card"}}}})
	message := map[string]any{"content": "my card is " + killEndCard}
	var ids []string
	for i := range killEndConversations {
		id := api.data(t, srv.url, "POST", "/api/v1/agents/"+agent["id"].(string)+"/conversations", map[string]any{"version": "draft"})["id"].(string)
		status, body := killEndSend(api.hc, "POST", srv.url+"/api/v1/conversations/"+id+"/messages", api.token, message, fmt.Sprint("m", i))
		if status != 200 {
			t.Fatalf("message %d: %d %s", i, status, body)
		}
		ids = append(ids, id)
	}

	acked := endAllUntilKilled(t, srv, api, ids)
	srv, _ = startServer(t, bin, dataDir, flags...)
	ended := 0
	for i, id := range ids {
		if checkConversationWhole(t, srv.url, api, id, fmt.Sprint("m", i), message, acked[id]) {
			ended++
		}
	}
	t.Logf("%d of %d ends acknowledged before the kill; %d ended after it", len(acked), len(ids), ended)
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()
}

// endAllUntilKilled ends every conversation of ids at once, 8 at a time, and SIGKILLs
// the server once killEndAcked ends were acknowledged; it returns those acknowledged.
func endAllUntilKilled(t *testing.T, srv *proc, api killAPI, ids []string) map[string]bool {
	t.Helper()
	var mu sync.Mutex
	acked := map[string]bool{}
	enough := make(chan struct{})
	work := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				status, _ := killEndSend(api.hc, "POST", srv.url+"/api/v1/conversations/"+id+"/end", api.token, nil, "")
				if status != 200 {
					continue // killed meanwhile: either outcome
				}
				mu.Lock()
				acked[id] = true
				if len(acked) == killEndAcked {
					close(enough)
				}
				mu.Unlock()
			}
		}()
	}
	go func() {
		defer close(work)
		for _, id := range ids {
			select {
			case work <- id:
			case <-enough:
				return
			}
		}
	}()
	select {
	case <-enough:
	case <-time.After(60 * time.Second):
		t.Fatal("10 ends were not acknowledged in a minute")
	}
	srv.cmd.Process.Signal(syscall.SIGKILL)
	srv.cmd.Wait()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	out := map[string]bool{}
	for id := range acked {
		out[id] = true
	}
	return out
}

// checkConversationWhole checks conversation id after the restart (see
// TestConversationEndSurvivesKill) and reports whether it ended.
func checkConversationWhole(t *testing.T, url string, api killAPI, id, key string, message any, acked bool) bool {
	t.Helper()
	c := api.data(t, url, "GET", "/api/v1/conversations/"+id, nil)
	text, _ := json.Marshal(c["messages"])
	raw := strings.Contains(string(text), killEndCard)
	retry, body := killEndSend(api.hc, "POST", url+"/api/v1/conversations/"+id+"/messages", api.token, message, key)
	switch c["status"] {
	case "ended":
		callID, _ := c["call_id"].(string)
		if raw || callID == "" || retry != http.StatusConflict {
			t.Errorf("%s ended: card in the clear %v, call %q, retry %d %s; want redacted, a call, 409", id, raw, callID, retry, body)
			return true
		}
		call := api.data(t, url, "GET", "/api/v1/calls/"+callID, nil)
		transcript, _ := json.Marshal(call["transcript"])
		if strings.Contains(string(transcript), killEndCard) || !strings.Contains(string(transcript), "my card is") {
			t.Errorf("%s: its call's transcript %s, want the turns redacted", id, transcript)
		}
		return true
	case "active":
		if acked {
			t.Errorf("%s: its end was acknowledged, and it is open after the kill", id)
		}
		if !raw || c["call_id"] != nil || retry != http.StatusOK || !bytes.Contains(body, []byte(killEndCard)) {
			t.Errorf("%s open: card as sent %v, call %v, retry %d %s; want the turns as sent, no call, the kept answer replayed", id, raw, c["call_id"], retry, body)
		}
	default:
		t.Errorf("%s: status %v", id, c["status"])
	}
	return false
}

// killEndSend sends one request without failing the test (the server may be killed
// under it); key, when not empty, is its Idempotency-Key.
func killEndSend(hc *http.Client, method, url, token string, body any, key string) (int, []byte) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}
