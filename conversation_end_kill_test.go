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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
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

// endAllUntilKilled ends every conversation of ids (sendAllUntilKilled); it returns
// those whose end was acknowledged.
func endAllUntilKilled(t *testing.T, srv *proc, api killAPI, ids []string) map[string]bool {
	t.Helper()
	var mu sync.Mutex
	acked := map[string]bool{}
	sendAllUntilKilled(t, srv, ids, func(_ int, id string) bool {
		if status, _ := killEndSend(api.hc, "POST", srv.url+"/api/v1/conversations/"+id+"/end", api.token, nil, ""); status != 200 {
			return false // killed meanwhile: either outcome
		}
		mu.Lock()
		acked[id] = true
		mu.Unlock()
		return true
	})
	return acked
}

// sendAllUntilKilled runs send for each conversation of ids, 8 at a time, and SIGKILLs
// the server once killEndAcked of them reported an acknowledged answer; it returns once
// every send has ended.
func sendAllUntilKilled(t *testing.T, srv *proc, ids []string, send func(i int, id string) bool) {
	t.Helper()
	var acked atomic.Int64
	enough := make(chan struct{})
	work := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if send(i, ids[i]) && acked.Add(1) == killEndAcked {
					close(enough)
				}
			}
		})
	}
	go func() {
		defer close(work)
		for i := range ids {
			select {
			case work <- i:
			case <-enough:
				return
			}
		}
	}()
	select {
	case <-enough:
	case <-time.After(60 * time.Second):
		t.Fatal("10 answers were not acknowledged in a minute")
	}
	srv.cmd.Process.Signal(syscall.SIGKILL)
	srv.cmd.Wait()
	wg.Wait()
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

// TestEndingTurnSurvivesKill: the same workspace; each of 40 conversations is sent one
// message holding a card number, under an Idempotency-Key, to which the model answers by
// calling its end_call tool, so each turn ends its conversation. The server is SIGKILLed
// once 10 were answered. Started again, each message is sent again with its key: a turn
// acknowledged before the kill is replayed (the same call, the answer as the end stored
// it: redacted); a turn committed but unanswered is replayed from what its end stored,
// redacted too; a turn never committed is answered now, or, when the killed server was
// answering it, is 409 while that server's lease holds (nothing of it stored: the
// conversation open, its welcome message alone). Each answered conversation ends ended, redacted,
// with the call its answer names.
func TestEndingTurnSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it")
	}
	bin := voiceapiBinary(t)
	model := llmtest.New(t, data.LLMInternal)
	model.Respond(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "Goodbye!", ToolCalls: []llm.ToolCall{{ID: "call_end", Name: "hang_up", Arguments: "{}"}}}
	})
	dataDir := filepath.Join(t.TempDir(), "data")
	flags := []string{"--allow-private-urls", "--rate-limit", "0"}
	srv, stdout := startServer(t, bin, dataDir, flags...)
	api := killAPI{hc: &http.Client{Timeout: 20 * time.Second}, token: bootstrapToken(t, stdout)}
	raw, _ := json.Marshal(model.LLMConfig())
	var llmConfig map[string]any
	json.Unmarshal(raw, &llmConfig)
	llmConfig["tools"] = []any{map[string]any{"name": "hang_up", "type": "end_call"}}
	agent := api.data(t, srv.url, "POST", "/api/v1/agents", map[string]any{"name": "Desk", "llm_config": llmConfig})
	api.data(t, srv.url, "PUT", "/api/v1/workspaces/"+agent["workspace_id"].(string), map[string]any{
		"privacy": map[string]any{"redaction": map[string]any{"detectors": []string{"card"}}}})
	message := map[string]any{"content": "bye, my card is " + killEndCard}
	var ids []string
	for range killEndConversations {
		ids = append(ids, api.data(t, srv.url, "POST", "/api/v1/agents/"+agent["id"].(string)+"/conversations", map[string]any{"version": "draft"})["id"].(string))
	}

	acked := map[string]string{} // conversation → the call its acknowledged answer named
	var mu sync.Mutex
	sendAllUntilKilled(t, srv, ids, func(i int, id string) bool {
		status, body := killEndSend(api.hc, "POST", srv.url+"/api/v1/conversations/"+id+"/messages", api.token, message, fmt.Sprint("bye", i))
		if status != 200 {
			return false
		}
		var turn struct {
			Data struct {
				CallID string `json:"call_id"`
			}
		}
		json.Unmarshal(body, &turn)
		mu.Lock()
		acked[id] = turn.Data.CallID
		mu.Unlock()
		return true
	})

	srv, _ = startServer(t, bin, dataDir, flags...)
	replayed, leased := 0, 0
	for i, id := range ids {
		hc := api.hc
		req, _ := http.NewRequest("POST", srv.url+"/api/v1/conversations/"+id+"/messages", strings.NewReader(`{"content":"bye, my card is `+killEndCard+`"}`))
		req.Header.Set("Authorization", "Bearer "+api.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", fmt.Sprint("bye", i))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var turn struct {
			Data struct {
				CallID string `json:"call_id"`
			}
		}
		json.Unmarshal(body, &turn)
		again := resp.Header.Get("Idempotent-Replayed") == "true"
		if again {
			replayed++
		}
		if resp.StatusCode == http.StatusConflict && acked[id] == "" {
			// Mid-answer at the kill: nothing stored, and the dead server's lease holds
			// the conversation until it lapses (docs/conversations.md): 409 until then.
			c := api.data(t, srv.url, "GET", "/api/v1/conversations/"+id, nil)
			text, _ := json.Marshal(c["messages"]) // the welcome message alone
			if c["status"] != "active" || c["call_id"] != nil || strings.Contains(string(text), `"user"`) {
				t.Errorf("%s: its retry is 409 (%s), but it is %v with call %v and messages %s; want open with nothing of the turn stored",
					id, body, c["status"], c["call_id"], text)
			}
			leased++
			continue
		}
		switch {
		case resp.StatusCode != 200 || turn.Data.CallID == "":
			t.Errorf("%s: the retry %d %s, want 200 naming the call", id, resp.StatusCode, body)
			continue
		case acked[id] != "" && (!again || turn.Data.CallID != acked[id]):
			t.Errorf("%s: acknowledged with call %s; the retry replayed %v, call %s", id, acked[id], again, turn.Data.CallID)
		case again && bytes.Contains(body, []byte(killEndCard)):
			t.Errorf("%s: the replayed ending turn holds the card in the clear: %s", id, body)
		}
		c := api.data(t, srv.url, "GET", "/api/v1/conversations/"+id, nil)
		text, _ := json.Marshal(c["messages"])
		if c["status"] != "ended" || c["call_id"] != turn.Data.CallID || strings.Contains(string(text), killEndCard) {
			t.Errorf("%s after the retry: %v, call %v (the answer's %s), card in the clear %v", id, c["status"], c["call_id"], turn.Data.CallID,
				strings.Contains(string(text), killEndCard))
		}
	}
	t.Logf("%d of %d ending turns acknowledged before the kill; %d replayed after it, %d held by the dead server's lease",
		len(acked), len(ids), replayed, leased)
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()
}
