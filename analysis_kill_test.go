package main

import (
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

// TestBackfillAcrossAKill runs an analysis backfill in a real server whose model is an
// OpenAI-compatible stand-in on loopback (provider internal, --allow-private-urls),
// SIGKILLs the server while the model is answering one of the calls, and starts it
// again: the job, its lease run out, is taken up where the last stored call left it, and
// every call ends with one analysis and one call.analyzed event.
func TestBackfillAcrossAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it")
	}
	tmp := t.TempDir()
	bin := voiceapiBinary(t)
	model := llmtest.New(t, data.LLMInternal)
	const calls = 10
	held := &heldAnalysis{asked: map[string]int{}, killAt: "call-4", inFlight: make(chan struct{}), release: make(chan struct{})}
	model.Respond(held.respond)

	dataDir := filepath.Join(tmp, "data")
	flags := []string{"--allow-private-urls", "--job-lease", "2s", "--job-poll", "200ms", "--rate-limit", "0"}
	srv, stdout := startServer(t, bin, dataDir, flags...)
	api := killAPI{hc: &http.Client{Timeout: 10 * time.Second}, token: bootstrapToken(t, stdout)}
	ids, jobID := api.startBackfill(t, srv.url, model.LLMConfig(), calls)

	select {
	case <-held.inFlight:
	case <-time.After(30 * time.Second):
		t.Fatal("the backfill never reached " + held.killAt)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.cmd.Wait()
	close(held.release)

	srv, _ = startServer(t, bin, dataDir, flags...)
	deadline := time.Now().Add(60 * time.Second)
	var j map[string]any
	for {
		j = api.data(t, srv.url, "GET", "/api/v1/jobs/"+jobID, nil)
		if j["status"] == "succeeded" || j["status"] == "failed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if j["status"] != "succeeded" || j["attempt"] != 2.0 || j["progress"].(map[string]any)["done"] != float64(calls) {
		t.Fatalf("job after the restart: %v", j)
	}
	api.checkAnalysedOnce(t, srv.url, ids)
	held.mu.Lock()
	defer held.mu.Unlock()
	for i := range calls {
		m := fmt.Sprintf("call-%d", i)
		if want := map[bool]int{true: 2, false: 1}[m == held.killAt]; held.asked[m] != want {
			t.Errorf("%s asked of the model %d times, want %d", m, held.asked[m], want)
		}
	}
}

// heldAnalysis answers the analysis requests, counted by the call's marker ("call-N");
// the first request for killAt closes inFlight and waits for release (the server is
// killed meanwhile).
type heldAnalysis struct {
	mu                sync.Mutex
	asked             map[string]int
	killAt            string
	inFlight, release chan struct{}
}

func (h *heldAnalysis) respond(r llmtest.Request) llmtest.Reply {
	text := r.Messages[0].Content
	marker := text[strings.Index(text, "call-"):]
	marker = strings.TrimRight(strings.Fields(marker)[0], ".")
	h.mu.Lock()
	h.asked[marker]++
	first := h.asked[marker] == 1
	h.mu.Unlock()
	if marker == h.killAt && first {
		close(h.inFlight)
		<-h.release // the server is killed meanwhile
	}
	return llmtest.JSON(`{"outcome":"booked","call_successful":true}`) // internal: structured output
}

// killAPI calls a server of the kill tests with one token.
type killAPI struct {
	hc    *http.Client
	token string
}

// data sends one request, which must succeed, and returns its answer's data object.
func (k killAPI) data(t *testing.T, url, method, path string, body any) map[string]any {
	t.Helper()
	status, out := killTestDo(t, k.hc, method, url+path, k.token, body)
	if status >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, status, out)
	}
	var env map[string]any
	json.Unmarshal(out, &env)
	d, _ := env["data"].(map[string]any)
	return d
}

// startBackfill publishes an agent analysed by the model of lc, registers the ended
// calls "call-0" to "call-<calls-1>" and starts their backfill; it returns the calls'
// ids and the job's.
func (k killAPI) startBackfill(t *testing.T, url string, lc data.LLMConfig, calls int) ([]string, string) {
	t.Helper()
	agent := k.data(t, url, "POST", "/api/v1/agents", map[string]any{"name": "Bookings",
		"llm_config": map[string]any{"provider": lc.Provider, "model": lc.Model, "base_url": lc.BaseURL, "temperature": 0.2},
		"analysis_config": map[string]any{"fields": []any{map[string]any{"name": "outcome", "type": "enum", "description": "d", "choices": []any{"booked", "declined"}}},
			"success_criterion": "A table was booked."}})
	agentID := agent["id"].(string)
	killTestDo(t, k.hc, "POST", url+"/api/v1/agents/"+agentID+"/publish", k.token, map[string]any{})
	from := time.Now().UTC().Add(-time.Minute)
	var ids []string
	for i := range calls {
		c := k.data(t, url, "POST", "/api/v1/calls", map[string]any{"agent_id": agentID, "direction": "web", "status": "ended",
			"transcript": []any{map[string]any{"role": "user", "content": fmt.Sprintf("A table, call-%d.", i), "start_ms": 0}}})
		ids = append(ids, c["id"].(string))
	}
	job := k.data(t, url, "POST", "/api/v1/agents/"+agentID+"/analysis/backfill", map[string]any{
		"from": from.Format(time.RFC3339Nano), "to": time.Now().UTC().Add(time.Minute).Format(time.RFC3339Nano)})
	return ids, job["id"].(string)
}

// checkAnalysedOnce checks that every call of ids ends with one analysis from the model,
// its usage, and one call.analyzed event.
func (k killAPI) checkAnalysedOnce(t *testing.T, url string, ids []string) {
	t.Helper()
	events := map[string]int{}
	for page := "/api/v1/audit-log?per_page=100&type=call.analyzed"; page != ""; {
		status, out := killTestDo(t, k.hc, "GET", url+page, k.token, nil)
		if status != 200 {
			t.Fatalf("audit log: %d %s", status, out)
		}
		var list struct {
			Data []struct{ Data struct{ ID string } }
			Meta struct {
				NextCursor *string `json:"next_cursor"`
			}
		}
		json.Unmarshal(out, &list)
		for _, e := range list.Data {
			events[e.Data.ID]++
		}
		page = ""
		if list.Meta.NextCursor != nil {
			page = "/api/v1/audit-log?per_page=100&type=call.analyzed&cursor=" + *list.Meta.NextCursor
		}
	}
	for i, id := range ids {
		c := k.data(t, url, "GET", "/api/v1/calls/"+id, nil)
		if events[id] != 1 || c["analysis_source"] != "llm" || len(c["usage"].(map[string]any)["analysis"].([]any)) != 1 {
			t.Errorf("call-%d: %d call.analyzed events, analysis %v from %v, usage %v", i, events[id], c["analysis"], c["analysis_source"], c["usage"])
		}
	}
}

// killTestDo sends one request and returns the status and body.
func killTestDo(t *testing.T, hc *http.Client, method, url, token string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}
