package cli_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
)

// TestCallsAnalyzeAndBackfill: `voiceapi calls analyze --wait` queues a call's analysis
// by its agent's model and prints what it filled; `calls backfill --wait` follows a
// backfill's progress to its end; a refused analysis and a failed one exit non-zero with
// the reason. The model is the stand-in, answering the structured output the request asks.
func TestCallsAnalyzeAndBackfill(t *testing.T) {
	s := newTestServer(t)
	s.Svc.Analysis.Configure(cli.AnalysisOptions(cli.LLMSettings{AllowURLPrefixes: []string{s.stand.URL + "/"}}))
	var refuse atomic.Bool
	s.stand.Respond(func(r llmtest.Request) llmtest.Reply {
		if refuse.Load() {
			return llmtest.Reply{Status: http.StatusUnauthorized, Message: "bad key"}
		}
		return llmtest.JSON(map[string]any{"outcome": "booked", "party_size": 4, "call_successful": true})
	})
	tok := s.Owner.Token
	var cfg map[string]any
	json.Unmarshal([]byte(s.llmConfig()), &cfg)
	agent := s.Do("POST", "/api/v1/agents", tok, map[string]any{"name": "Bookings", "llm_config": cfg, "analysis_config": map[string]any{
		"fields": []any{
			map[string]any{"name": "outcome", "type": "enum", "description": "How it ended", "choices": []any{"booked", "declined"}, "required": true},
			map[string]any{"name": "party_size", "type": "number", "description": "Guests"}},
		"success_criterion": "A table was booked."}}).Data()["id"].(string)
	if r := s.Do("POST", "/api/v1/agents/"+agent+"/publish", tok, nil); r.Status != http.StatusNoContent {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	register := func() string {
		r := s.Do("POST", "/api/v1/calls", tok, map[string]any{"agent_id": agent, "direction": "web", "status": "ended",
			"transcript": []any{map[string]any{"role": "user", "content": "A table for four.", "start_ms": 0}}})
		if r.Status != http.StatusCreated {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
		return r.Data()["id"].(string)
	}
	call := register()
	from, to := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), time.Now().Add(time.Hour).UTC().Format(time.RFC3339)

	// A --poll or --timeout that is not positive is refused before anything is queued.
	for _, args := range [][]string{
		{"calls", "analyze", call, "--wait", "--poll", "0s"},
		{"calls", "analyze", call, "--wait", "--timeout", "-1s"},
		{"calls", "backfill", "Bookings", "--from", from, "--to", to, "--wait", "--poll", "-20ms"},
	} {
		if _, err := s.voiceapi(t, args...); err == nil || !strings.Contains(err.Error(), "--poll and --timeout must be more than 0") {
			t.Errorf("%v: %v", args, err)
		}
	}
	if jobs := s.Do("GET", "/api/v1/jobs", tok, nil).List(); len(jobs) != 0 {
		t.Errorf("refused flags queued %d job(s): %v", len(jobs), jobs)
	}

	out, err := s.voiceapi(t, "calls", "analyze", call)
	if err != nil || !strings.Contains(out, "Analysis of "+call+" queued: job job_") {
		t.Fatalf("analyze: %v %q", err, out)
	}
	out, err = s.voiceapi(t, "calls", "analyze", call, "--wait", "--poll", "20ms")
	if err != nil {
		t.Fatalf("analyze --wait: %v %q", err, out)
	}
	for _, want := range []string{"Call " + call + " analyzed:", "  call_successful: true\n", "  outcome: booked\n", "  party_size: 4\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("analyze --wait lacks %q:\n%s", want, out)
		}
	}
	out, err = s.voiceapi(t, "calls", "analyze", call, "--wait", "--poll", "20ms", "--json")
	var got data.Call
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || got.ID != call || got.Analysis["outcome"] != "booked" {
		t.Errorf("analyze --wait --json: %v %q", err, out)
	}

	register()
	out, err = s.voiceapi(t, "calls", "backfill", "Bookings", "--from", from, "--to", to, "--wait", "--poll", "20ms")
	if err != nil || !strings.Contains(out, "Backfill of Bookings: job job_") || !strings.Contains(out, "succeeded: 2 calls looked at.") {
		t.Errorf("backfill --wait: %v\n%s", err, out)
	}

	// Refused: a version that asks nothing (the server's 422, with what to do); no range.
	plain := s.Do("POST", "/api/v1/calls", tok, map[string]any{"agent_id": s.Do("POST", "/api/v1/agents", tok, map[string]any{"name": "Plain"}).Data()["id"],
		"direction": "web", "status": "ended"}).Data()["id"].(string)
	if _, err := s.voiceapi(t, "calls", "analyze", plain); err == nil || !strings.Contains(err.Error(), "analysis/backfill") {
		t.Errorf("analyze of a call whose version asks nothing: %v", err)
	}
	if _, err := s.voiceapi(t, "calls", "backfill", "Bookings", "--wait"); err == nil || !strings.Contains(err.Error(), "--from and --to") {
		t.Errorf("backfill without a range: %v", err)
	}
	// Failed: the provider refuses the key; --wait exits with the job's reason.
	refuse.Store(true)
	if _, err := s.voiceapi(t, "calls", "analyze", register(), "--wait", "--poll", "20ms"); err == nil || !strings.Contains(err.Error(), "failed") || !strings.Contains(err.Error(), "bad key") {
		t.Errorf("a failed analysis: %v", err)
	}
}
