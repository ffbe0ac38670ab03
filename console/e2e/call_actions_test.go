package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/service"
)

// TestCallActions: a call's page offers what the API does with a call beyond reading and
// deleting it. "Analyze with the agent's model" queues its analysis (the page shows it
// once the job ran); on a call whose version asks for nothing the refusal, with what to
// do, shows beside the button; "Make a test of this call" makes a scripted test of the
// agent from it and opens that test.
func TestCallActions(t *testing.T) {
	stand := llmtest.New(t, data.LLMInternal)
	stand.Respond(func(r llmtest.Request) llmtest.Reply {
		return llmtest.JSON(map[string]any{"outcome": "booked"})
	})
	b := newBrowserWith(t, func(svc *service.Services) {
		svc.Analysis.Configure(cli.AnalysisOptions(cli.LLMSettings{AllowPrivate: true}))
	})
	raw, _ := json.Marshal(stand.LLMConfig())
	var cfg map[string]any
	json.Unmarshal(raw, &cfg)
	agent := b.api("POST", "/api/v1/agents", map[string]any{"name": "Bookings", "llm_config": cfg, "analysis_config": map[string]any{
		"fields": []any{map[string]any{"name": "outcome", "type": "enum", "description": "How it ended", "choices": []any{"booked", "declined"}}}}}).Data()["id"].(string)
	if r := b.api("POST", "/api/v1/agents/"+agent+"/publish", nil); r.Status != http.StatusNoContent {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	register := func(agentID string) string {
		r := b.api("POST", "/api/v1/calls", map[string]any{"agent_id": agentID, "direction": "web", "status": "ended",
			"transcript": []any{map[string]any{"role": "user", "content": "A table for four tonight.", "start_ms": 0}}})
		if r.Status != http.StatusCreated {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
		return r.Data()["id"].(string)
	}
	call := register(agent)
	b.signIn(b.env.Owner.Email, b.env.Owner.Password, "")

	b.open("/calls/" + call)
	b.submit("#analyze button")
	if s := b.text("#analyze .notice"); !strings.HasPrefix(s, "Analysis queued") {
		t.Errorf("the notice beside the button: %q", s)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(b.text("main"), "booked") {
		if time.Now().After(deadline) {
			t.Fatalf("the analysis never showed on the call's page:\n%s", b.text("main"))
		}
		time.Sleep(100 * time.Millisecond)
		b.open("/calls/" + call)
	}
	if s := b.text("#analyze button"); s != "Analyze again with the agent's model" {
		t.Errorf("the button of an analyzed call: %q", s)
	}

	plain := register(b.api("POST", "/api/v1/agents", map[string]any{"name": "Plain"}).Data()["id"].(string))
	b.open("/calls/" + plain)
	b.submit("#analyze button")
	if s := b.text("#analyze .alert"); !strings.Contains(s, "asks analysis for nothing") || !strings.Contains(s, "/analysis/backfill") {
		t.Errorf("the refusal beside the button: %q", s)
	}

	b.open("/calls/" + call)
	b.submit("#to-test button")
	var path string
	b.eval("where", `location.pathname`, &path)
	if !strings.HasPrefix(path, "/agents/"+agent+"/tests/tst_") {
		t.Fatalf("after making a test, the page is %s", path)
	}
	main := b.text("main")
	for _, want := range []string{"Test made from the call", "From call " + call} {
		if !strings.Contains(main, want) {
			t.Errorf("the new test's page lacks %q:\n%s", want, main)
		}
	}
	var script string
	b.eval("the script", `document.querySelector('textarea[name="script"]').value`, &script)
	if strings.TrimSpace(script) != "A table for four tonight." {
		t.Errorf("the new test's script = %q", script)
	}
	b.audit("call-actions")
	b.backfillFromAnalysisPage(agent, register(agent))
}

// backfillFromAnalysisPage analyzes the agent's calls of today from its analysis page
// (POST /agents/{id}/analysis/backfill) until waiting is analyzed; a range that ends
// before it starts is refused beside the form first.
func (b *browser) backfillFromAnalysisPage(agent, waiting string) {
	t := b.t
	t.Helper()
	today := time.Now().UTC()
	b.open("/agents/" + agent + "/analysis")
	b.run("a backwards range", chromedp.SetValue("#bf-from", today.Format("2006-01-02"), chromedp.ByQuery),
		chromedp.SetValue("#bf-to", today.AddDate(0, 0, -2).Format("2006-01-02"), chromedp.ByQuery))
	b.submit("#backfill button")
	if s := b.text("#backfill .alert"); !strings.Contains(s, "To must be after") {
		t.Errorf("the refused range beside the form: %q", s)
	}
	b.run("today", chromedp.SetValue("#bf-from", today.Format("2006-01-02"), chromedp.ByQuery),
		chromedp.SetValue("#bf-to", today.Format("2006-01-02"), chromedp.ByQuery))
	b.submit("#backfill button")
	if s := b.text("#backfill .notice"); !strings.HasPrefix(s, "Backfill queued (job job_") {
		t.Errorf("the notice beside the form: %q", s)
	}
	deadline := time.Now().Add(30 * time.Second)
	for b.api("GET", "/api/v1/calls/"+waiting, nil).Data()["analysis"] == nil {
		if time.Now().After(deadline) {
			t.Fatal("the backfill never analyzed the call")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
