package service_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/llm"
)

// TestExtractionByForcedToolCall: on each protocol (OpenAI-compatible and Bedrock
// Converse), the call's agent version's model is made to call record_analysis, whose
// parameters are the fields' schema; the answer becomes the call's analysis (source
// llm), its values count in the figures, its tokens are the call's analysis usage,
// priced, and call.analyzed is recorded once.
func TestExtractionByForcedToolCall(t *testing.T) {
	for _, provider := range []string{data.LLMGroq, data.LLMBedrockClaude} {
		t.Run(provider, func(t *testing.T) {
			e := newAnalysisEnv(t, provider)
			agent := e.agent(fmt.Sprintf(bookingConfig, false))
			price := data.Money(1_000_000) // 1 a million input tokens, model or not
			if _, err := e.svc.Prices.SetPriceTable(e.ctx, data.PriceTableSet{Currency: "USD", Prices: []data.PriceSet{
				{Provider: provider, Model: data.AnyModel, Unit: data.UnitLLMInput, Price: &price}}}); err != nil {
				t.Fatal(err)
			}
			c := e.endedCall(agent, "call-1")
			var seen llmtest.Request
			e.model.Respond(func(r llmtest.Request) llmtest.Reply {
				seen = r
				return analysisCall(goodAnalysis)
			})
			job, err := e.svc.Analysis.AnalyzeCall(e.ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			e.runDue()
			if j := e.job(job.ID); j.Status != data.JobSucceeded {
				t.Fatalf("job = %+v", j)
			}
			if seen.ToolChoice != (llm.ToolChoice{Mode: "tool", Name: "record_analysis"}) || len(seen.Tools) != 1 ||
				!strings.Contains(seen.Messages[0].Content, "user: A table for four, call-1.") || seen.Temperature == nil || *seen.Temperature != 0 {
				t.Errorf("request: choice %+v, tools %d, messages %+v", seen.ToolChoice, len(seen.Tools), seen.Messages)
			}
			props := seen.Tools[0].Parameters["properties"].(map[string]any)
			if outcome := props["outcome"].(map[string]any); !reflect.DeepEqual(outcome["enum"], []any{"booked", "declined"}) || outcome["type"] != "string" {
				t.Errorf("outcome's schema = %v", outcome)
			}
			if guests := props["guests"].(map[string]any); !reflect.DeepEqual(guests["type"], []any{"number", "null"}) {
				t.Errorf("guests' schema = %v", guests)
			}
			got := e.call(c.ID)
			want := map[string]any{"outcome": "booked", "guests": 4.0, "day": "2026-06-05", "call_successful": true, "summary": "A table for four on June 5."}
			if !reflect.DeepEqual(got.Analysis, want) || *got.AnalysisSource != data.AnalysisLLM || got.AnalyzedAt == nil || got.AnalysisError != nil {
				t.Errorf("analysis %v (%v, %v, %v)", got.Analysis, got.AnalysisSource, got.AnalyzedAt, got.AnalysisError)
			}
			u := got.Usage.Analysis
			// 1 a million input tokens: a micro-unit a token; output tokens have no price.
			if len(u) != 1 || u[0].Provider != provider || u[0].InputTokens == 0 || got.Cost == nil || got.Cost.TotalMicros != u[0].InputTokens ||
				len(got.Cost.Unpriced) != 1 || got.Cost.Unpriced[0].Quantity != u[0].OutputTokens {
				t.Errorf("usage %+v, cost %+v", got.Usage, got.Cost)
			}
			if n := e.analyzedEvents(); n[c.ID] != 1 {
				t.Errorf("call.analyzed events: %v", n)
			}
			f, err := e.svc.Analytics.AnalysisFigures(e.ctx, data.AnalysisQuery{AgentID: agent, Field: "outcome"})
			if err != nil || f.Values["booked"] != 1 || f.Success.Judged != 1 || *f.Success.Rate != 1 {
				t.Errorf("figures %+v, %v", f, err)
			}
		})
	}
}

// TestExtractionMisfitRetriedOnceThenRecorded: an answer that does not fit goes back to
// the model once with what was wrong; a second misfit is the call's analysis_error, never
// stored as its analysis, and the job fails; a fit second answer is stored.
func TestExtractionMisfitRetriedOnceThenRecorded(t *testing.T) {
	e := newAnalysisEnv(t, data.LLMGroq)
	agent := e.agent(fmt.Sprintf(bookingConfig, false))
	bad := `{"outcome":"maybe","guests":"four","vip":null,"day":null,"note":null,"call_successful":true,"summary":"s"}`

	fixed := e.endedCall(agent, "call-1")
	e.model.Queue(analysisCall(bad), analysisCall(goodAnalysis))
	if _, err := e.svc.Analysis.AnalyzeCall(e.ctx, fixed.ID); err != nil {
		t.Fatal(err)
	}
	e.runDue()
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	retry := reqs[1].ToolResults()
	if len(retry) != 1 || !strings.Contains(retry[0].Content, "analysis.outcome") || !strings.Contains(retry[0].Content, "analysis.guests") {
		t.Errorf("the retry's tool result = %+v", retry)
	}
	if got := e.call(fixed.ID); got.Analysis["outcome"] != "booked" || got.AnalysisError != nil {
		t.Errorf("after a fit retry: %v, %v", got.Analysis, got.AnalysisError)
	}

	broken := e.endedCall(agent, "call-2")
	e.model.Queue(llmtest.Text("It went well."), analysisCall(`{"outcome":"booked"}`))
	job, err := e.svc.Analysis.AnalyzeCall(e.ctx, broken.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.runDue()
	got := e.call(broken.ID)
	if got.Analysis != nil || got.AnalysisSource != nil || got.AnalysisError == nil || !strings.Contains(got.AnalysisError.Message, "did not fit") {
		t.Errorf("after two misfits: analysis %v, error %+v", got.Analysis, got.AnalysisError)
	}
	if len(got.Usage.Analysis) != 1 || got.Usage.Analysis[0].InputTokens == 0 {
		t.Errorf("the misfits' tokens are not counted: %+v", got.Usage)
	}
	if j := e.job(job.ID); j.Status != data.JobFailed || j.LastError == nil {
		t.Errorf("job = %+v", j)
	}
	if n := e.analyzedEvents(); n[broken.ID] != 0 || n[fixed.ID] != 1 {
		t.Errorf("call.analyzed events: %v", n)
	}
}

// TestExtractionTransientFailureRetried: a provider's 429 is retried by the job
// mechanism after its backoff; a 401 fails at once, recorded on the call.
func TestExtractionTransientFailureRetried(t *testing.T) {
	e := newAnalysisEnv(t, data.LLMGroq)
	agent := e.agent(fmt.Sprintf(bookingConfig, false))
	c := e.endedCall(agent, "call-1")
	e.model.Queue(llmtest.Fail(429, "Rate limit reached"), analysisCall(goodAnalysis))
	job, err := e.svc.Analysis.AnalyzeCall(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.runDue()
	if j := e.job(job.ID); j.Status != data.JobQueued || j.Attempt != 1 || j.LastError == nil || !strings.Contains(*j.LastError, "429") {
		t.Fatalf("after a 429: %+v", j)
	}
	if got := e.call(c.ID); got.Analysis != nil || got.AnalysisError != nil {
		t.Errorf("a transient failure stored something: %+v", got)
	}
	e.clock.move(time.Hour)
	e.runDue()
	if j := e.job(job.ID); j.Status != data.JobSucceeded || j.Attempt != 2 {
		t.Fatalf("after the backoff: %+v", j)
	}

	refused := e.endedCall(agent, "call-2")
	e.model.Queue(llmtest.Fail(401, "Invalid API Key"))
	job, _ = e.svc.Analysis.AnalyzeCall(e.ctx, refused.ID)
	e.runDue()
	if j := e.job(job.ID); j.Status != data.JobFailed {
		t.Errorf("after a 401: %+v", j)
	}
	if got := e.call(refused.ID); got.AnalysisError == nil || !strings.Contains(got.AnalysisError.Message, "401") || strings.Contains(got.AnalysisError.Message, llmtest.DefaultAPIKey) {
		t.Errorf("the 401 on the call: %+v", got.AnalysisError)
	}
}

// TestAutoAnalysisWhenACallEnds: an agent version with auto queues the analysis in the
// write that ends the call (once, however often the call is updated); without auto, or
// before the end, nothing is queued.
func TestAutoAnalysisWhenACallEnds(t *testing.T) {
	e := newAnalysisEnv(t, data.LLMGroq)
	auto := e.agent(fmt.Sprintf(bookingConfig, true))
	manual := e.agent(fmt.Sprintf(bookingConfig, false))
	e.model.Respond(func(llmtest.Request) llmtest.Reply { return analysisCall(goodAnalysis) })
	ongoing := data.CallOngoing
	for _, agent := range []string{manual, auto} {
		c, err := e.svc.Calls.RegisterCall(e.ctx, data.CallCreate{AgentID: agent, Direction: data.DirectionWeb, Status: &ongoing,
			Transcript: []data.TranscriptItem{{Role: "user", Content: "A table, call-x."}}})
		if err != nil {
			t.Fatal(err)
		}
		before := len(e.model.Requests())
		e.runDue()
		if len(e.model.Requests()) != before {
			t.Fatal("an ongoing call was analyzed")
		}
		if _, err := e.svc.Calls.UpdateCall(e.ctx, c.ID, data.CallUpdate{Status: data.Some(data.CallEnded)}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Calls.UpdateCall(e.ctx, c.ID, data.CallUpdate{Metadata: data.Some(map[string]any{"k": "v"})}); err != nil {
			t.Fatal(err)
		}
		e.runDue()
		got := e.call(c.ID)
		if analyzed := got.AnalysisSource != nil; analyzed != (agent == auto) {
			t.Errorf("agent auto=%v: analysis %v", agent == auto, got.Analysis)
		}
	}
	if n := len(e.model.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
}

// TestBackfillAfterALostLeaseAnalyzesEveryCallOnce: a backfill whose runner stops
// answering (a killed worker: its lease ends) is resumed by another runner after the
// last call stored; every call is analyzed, and stored, exactly once, the call in flight
// being asked of the model again.
func TestBackfillAfterALostLeaseAnalyzesEveryCallOnce(t *testing.T) {
	e := newAnalysisEnv(t, data.LLMGroq)
	agent := e.agent(fmt.Sprintf(bookingConfig, false))
	from := e.clock.now()
	var calls []*data.Call
	for i := range 12 {
		calls = append(calls, e.endedCall(agent, fmt.Sprintf("call-%d", i)))
	}
	unfinished, err := e.svc.Calls.RegisterCall(e.ctx, data.CallCreate{AgentID: agent, Direction: data.DirectionWeb})
	if err != nil {
		t.Fatal(err)
	}
	to := e.clock.now().Add(time.Second)

	var mu sync.Mutex
	asked := map[string]int{}
	stuck, release := make(chan struct{}), make(chan struct{})
	e.model.Respond(func(r llmtest.Request) llmtest.Reply {
		m := markerOf(r)
		mu.Lock()
		asked[m]++
		first := asked[m] == 1
		mu.Unlock()
		if m == "call-5" && first { // the first runner dies here
			close(stuck)
			<-release
		}
		return analysisCall(goodAnalysis)
	})
	job, err := e.svc.Analysis.BackfillAnalysis(e.ctx, agent, data.AnalysisBackfill{From: data.NewTime(from), To: data.NewTime(to)})
	if err != nil {
		t.Fatal(err)
	}
	dead := e.runner("dead")
	done := make(chan struct{})
	go func() { defer close(done); dead.RunDue(t.Context()) }()
	<-stuck
	// Newest first: the unfinished call (skipped), call-11 … call-6 stored, call-5 asked.
	if j := e.job(job.ID); j.Progress.Done != 7 || j.Progress.Total != 13 {
		t.Errorf("progress when the runner died: %+v", j.Progress)
	}
	e.clock.move(2 * time.Minute) // past the dead runner's lease
	e.runDue()                    // another runner takes the job over
	close(release)
	<-done
	j := e.job(job.ID)
	if j.Status != data.JobSucceeded || j.Progress.Done != 13 || j.Progress.Total != 13 || j.Attempt != 2 {
		t.Fatalf("job = %+v", j)
	}
	events := e.analyzedEvents()
	for i, c := range calls {
		if got := e.call(c.ID); events[c.ID] != 1 || got.AnalysisSource == nil || len(got.Usage.Analysis) != 1 {
			t.Errorf("call-%d: %d events, analysis %v, usage %+v", i, events[c.ID], got.Analysis, got.Usage)
		}
	}
	if got := e.call(unfinished.ID); got.Analysis != nil {
		t.Errorf("the unfinished call was analyzed: %v", got.Analysis)
	}
	want := map[string]int{}
	for i := range 12 {
		want[fmt.Sprintf("call-%d", i)] = 1
	}
	want["call-5"] = 2 // in flight when its runner died: asked again, stored once
	if !reflect.DeepEqual(asked, want) {
		t.Errorf("model asked %v", asked)
	}
}

// TestBackfillUsesTheVersionsFields: a field added in a later version fills past calls
// of an earlier version, each asked of its own version's model.
func TestBackfillUsesTheVersionsFields(t *testing.T) {
	e := newAnalysisEnv(t, data.LLMGroq)
	agent := e.agent(`{"fields":[{"name":"outcome","type":"enum","description":"d","choices":["booked","declined"]}]}`)
	from := e.clock.now()
	old := e.endedCall(agent, "call-1")
	var upd data.AgentUpdate
	if err := decodeStrict(`{"analysis_config":{"fields":[{"name":"outcome","type":"enum","description":"d","choices":["booked","declined"]},{"name":"mood","type":"string","description":"The caller's mood"}]}}`, &upd); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Agents.UpdateAgent(e.ctx, agent, upd); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Agents.PublishAgent(e.ctx, agent, data.PublishRequest{}); err != nil {
		t.Fatal(err)
	}
	var tools []llm.Tool
	e.model.Respond(func(r llmtest.Request) llmtest.Reply {
		tools = r.Tools
		return analysisCall(`{"outcome":"declined","mood":"calm"}`)
	})
	if _, err := e.svc.Analysis.BackfillAnalysis(e.ctx, agent, data.AnalysisBackfill{From: data.NewTime(from), To: data.NewTime(e.clock.now().Add(time.Second))}); err != nil {
		t.Fatal(err)
	}
	e.runDue()
	props := tools[0].Parameters["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if got := e.call(old.ID); got.Analysis["mood"] != "calm" || *got.AgentVersion != 1 || !slices.Equal(keys, []string{"mood", "outcome"}) {
		t.Errorf("backfilled call: %v (version %v), schema %v", got.Analysis, *got.AgentVersion, keys)
	}
	f, err := e.svc.Analytics.AnalysisFigures(e.ctx, data.AnalysisQuery{AgentID: agent, Field: "outcome"})
	if err != nil || f.Values["declined"] != 1 || len(f.Versions) != 1 || *f.Versions[0].AgentVersion != 1 {
		t.Errorf("figures %+v, %v", f, err)
	}
}
