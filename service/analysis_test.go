package service_test

import (
	"context"
	"encoding/json"
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
	"github.com/voiceapi/voiceapi/service"
)

// TestExtractionByStructuredOutput: on the OpenAI-compatible providers the call's agent
// version's model is asked for structured output (response_format json_schema, strict)
// whose schema is the fields', with no tool offered; its JSON text becomes the analysis.
func TestExtractionByStructuredOutput(t *testing.T) {
	for _, provider := range []string{data.LLMGroq, data.LLMAzure} {
		t.Run(provider, func(t *testing.T) {
			testExtraction(t, provider, func(seen llmtest.Request) map[string]any {
				if seen.ResponseSchema == nil || seen.ResponseSchema.Name != "record_analysis" || len(seen.Tools) != 0 || seen.ToolChoice != (llm.ToolChoice{}) {
					t.Fatalf("request: response schema %+v, tools %d, choice %+v", seen.ResponseSchema, len(seen.Tools), seen.ToolChoice)
				}
				return seen.ResponseSchema.Schema
			})
		})
	}
}

// TestExtractionByForcedToolCall: on Bedrock Converse, which has no structured output,
// the model is made to call record_analysis, whose parameters are the fields' schema.
func TestExtractionByForcedToolCall(t *testing.T) {
	testExtraction(t, data.LLMBedrockClaude, func(seen llmtest.Request) map[string]any {
		if seen.ToolChoice != (llm.ToolChoice{Mode: "tool", Name: "record_analysis"}) || len(seen.Tools) != 1 || seen.ResponseSchema != nil {
			t.Fatalf("request: choice %+v, tools %d, response schema %+v", seen.ToolChoice, len(seen.Tools), seen.ResponseSchema)
		}
		return seen.Tools[0].Parameters
	})
}

// TestExtractionByToolCallOnOldAzure: an Azure deployment reached through an api-version
// older than structured output (2024-08-01-preview) is asked by a forced tool call, as
// Bedrock is, rather than sent a response_format it would refuse.
func TestExtractionByToolCallOnOldAzure(t *testing.T) {
	testExtractionWith(t, data.LLMAzure, []llmtest.Option{llmtest.WithAPIVersion("2024-06-01")}, func(seen llmtest.Request) map[string]any {
		if seen.ToolChoice != (llm.ToolChoice{Mode: "tool", Name: "record_analysis"}) || len(seen.Tools) != 1 || seen.ResponseSchema != nil {
			t.Fatalf("request: choice %+v, tools %d, response schema %+v", seen.ToolChoice, len(seen.Tools), seen.ResponseSchema)
		}
		return seen.Tools[0].Parameters
	})
}

// testExtraction analyzes a call with provider's stand-in as the agent's model, the
// answer in the form asked of provider; schemaOf checks the request's form and returns
// the schema it carried. The answer becomes the call's analysis (source llm), its values
// count in the figures, its tokens are the call's analysis usage, priced, and
// call.analyzed is recorded once.
func testExtraction(t *testing.T, provider string, schemaOf func(llmtest.Request) map[string]any) {
	testExtractionWith(t, provider, nil, schemaOf)
}

func testExtractionWith(t *testing.T, provider string, opts []llmtest.Option, schemaOf func(llmtest.Request) map[string]any) {
	e := newAnalysisEnv(t, provider, opts...)
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
		return e.answer(goodAnalysis)
	})
	job, err := e.svc.Analysis.AnalyzeCall(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.runDue()
	if j := e.job(job.ID); j.Status != data.JobSucceeded {
		t.Fatalf("job = %+v", j)
	}
	if !strings.Contains(seen.Messages[0].Content, "user: A table for four, call-1.") || seen.Temperature == nil || *seen.Temperature != 0 {
		t.Errorf("request messages %+v, temperature %v", seen.Messages, seen.Temperature)
	}
	props := schemaOf(seen)["properties"].(map[string]any)
	if outcome := props["outcome"].(map[string]any); !reflect.DeepEqual(outcome["enum"], []any{"booked", "declined"}) || outcome["type"] != "string" {
		t.Errorf("outcome's schema = %v", outcome)
	}
	if guests := props["guests"].(map[string]any); !reflect.DeepEqual(guests["type"], []any{"number", "null"}) {
		t.Errorf("guests' schema = %v", guests)
	}
	got := e.call(c.ID)
	want := map[string]any{"outcome": "booked", "guests": json.Number("4"), "day": "2026-06-05", "call_successful": true, "summary": "A table for four on June 5."}
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
}

// TestExtractionMisfitRetriedOnceThenRecorded: an answer that does not fit goes back to
// the model once with what was wrong; a second misfit is the call's analysis_error, never
// stored as its analysis, and the job fails; a fit second answer is stored. In both
// forms: a structured output's faults go back as a user message, a tool call's as the
// tool's error.
func TestExtractionMisfitRetriedOnceThenRecorded(t *testing.T) {
	for _, provider := range []string{data.LLMGroq, data.LLMBedrockClaude} {
		t.Run(provider, func(t *testing.T) { testExtractionMisfit(t, provider) })
	}
}

func testExtractionMisfit(t *testing.T, provider string) {
	e := newAnalysisEnv(t, provider)
	agent := e.agent(fmt.Sprintf(bookingConfig, false))
	bad := `{"outcome":"maybe","guests":"four","vip":null,"day":null,"note":null,"call_successful":true,"summary":"s"}`

	fixed := e.endedCall(agent, "call-1")
	e.model.Queue(e.answer(bad), e.answer(goodAnalysis))
	if _, err := e.svc.Analysis.AnalyzeCall(e.ctx, fixed.ID); err != nil {
		t.Fatal(err)
	}
	e.runDue()
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	faults := reqs[1].LastUserText() // structured output: the faults follow the answer
	if !llm.SupportsResponseSchema(provider) {
		retry := reqs[1].ToolResults()
		if len(retry) != 1 || !retry[0].ToolError {
			t.Fatalf("the retry's tool results = %+v", retry)
		}
		faults = retry[0].Content
	} else if last := reqs[1].Messages[len(reqs[1].Messages)-2]; last.Role != llm.RoleAssistant || last.Content != bad {
		t.Errorf("the misfit answer is not sent back: %+v", last)
	}
	if !strings.Contains(faults, "analysis.outcome") || !strings.Contains(faults, "analysis.guests") {
		t.Errorf("the retry's faults = %q", faults)
	}
	if got := e.call(fixed.ID); got.Analysis["outcome"] != "booked" || got.AnalysisError != nil {
		t.Errorf("after a fit retry: %v, %v", got.Analysis, got.AnalysisError)
	}

	broken := e.endedCall(agent, "call-2")
	e.model.Queue(llmtest.Text("It went well."), e.answer(`{"outcome":"booked"}`))
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
	if n := e.callEvents(data.EventCallAnalysisFailed); n[broken.ID] != 1 || n[fixed.ID] != 0 {
		t.Errorf("call.analysis_failed events: %v, want one, of the misfit's call", n)
	}
}

// TestExtractionTransientFailureRetried: a provider's 429 is retried by the job
// mechanism after its backoff; a 401 fails at once, recorded on the call.
func TestExtractionTransientFailureRetried(t *testing.T) {
	e := newAnalysisEnv(t, data.LLMGroq)
	agent := e.agent(fmt.Sprintf(bookingConfig, false))
	c := e.endedCall(agent, "call-1")
	e.model.Queue(llmtest.Fail(429, "Rate limit reached"), e.answer(goodAnalysis))
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
	// A transient failure retried is no state change of the call; a refusal is.
	if n := e.callEvents(data.EventCallAnalysisFailed); n[refused.ID] != 1 || n[c.ID] != 0 {
		t.Errorf("call.analysis_failed events: %v, want one, of the refused call", n)
	}
}

// TestAutoAnalysisWhenACallEnds: an agent version with auto queues the analysis in the
// write that ends the call (once, however often the call is updated); without auto, or
// before the end, nothing is queued.
func TestAutoAnalysisWhenACallEnds(t *testing.T) {
	e := newAnalysisEnv(t, data.LLMGroq)
	auto := e.agent(fmt.Sprintf(bookingConfig, true))
	manual := e.agent(fmt.Sprintf(bookingConfig, false))
	e.model.Respond(func(llmtest.Request) llmtest.Reply { return e.answer(goodAnalysis) })
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
		return e.answer(goodAnalysis)
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
	var schema map[string]any
	e.model.Respond(func(r llmtest.Request) llmtest.Reply {
		if r.ResponseSchema != nil {
			schema = r.ResponseSchema.Schema
		}
		return e.answer(`{"outcome":"declined","mood":"calm"}`)
	})
	if _, err := e.svc.Analysis.BackfillAnalysis(e.ctx, agent, data.AnalysisBackfill{From: data.NewTime(from), To: data.NewTime(e.clock.now().Add(time.Second))}); err != nil {
		t.Fatal(err)
	}
	e.runDue()
	if schema == nil {
		t.Fatal("the model was not asked for structured output")
	}
	props := schema["properties"].(map[string]any)
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

// TestAnalysisJobThatGivesUpIsTheCallsFailure: a call's analysis whose every attempt's
// worker died (each claim commits, then nothing more is heard of it) is failed when
// claimed after its last; the call gets the job's failure as its analysis_error and one
// call.analysis_failed, and a later pass records no other. A failure the handler stored
// (a refusal) is not recorded a second time when its job fails.
func TestAnalysisJobThatGivesUpIsTheCallsFailure(t *testing.T) {
	e := newAnalysisEnv(t, data.LLMGroq)
	agent := e.agent(fmt.Sprintf(bookingConfig, false))
	c := e.endedCall(agent, "call-1")
	job, err := e.svc.Analysis.AnalyzeCall(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for range job.MaxAttempts {
		if err := e.store.Update(context.Background(), func(tx service.Tx) error {
			_, _, err := tx.ClaimJobs(data.JobClaim{Kinds: []string{service.JobKindAnalyzeCall}, Owner: "dead", Now: e.clock.now(),
				LeaseUntil: e.clock.now().Add(time.Minute), Limit: 1})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		e.clock.move(time.Minute)
	}
	e.runDue()
	e.runDue()
	if j := e.job(job.ID); j.Status != data.JobFailed {
		t.Fatalf("job = %+v, want failed", j)
	}
	got := e.call(c.ID)
	if got.Analysis != nil || got.AnalysisError == nil || !strings.Contains(got.AnalysisError.Message, "did not end") {
		t.Errorf("the call: analysis %v, error %+v; want the job's failure as its analysis_error", got.Analysis, got.AnalysisError)
	}
	if n := e.callEvents(data.EventCallAnalysisFailed); n[c.ID] != 1 {
		t.Errorf("call.analysis_failed events: %v, want one", n)
	}

	refused := e.endedCall(agent, "call-2")
	e.model.Queue(llmtest.Fail(401, "Invalid API Key"))
	if _, err := e.svc.Analysis.AnalyzeCall(e.ctx, refused.ID); err != nil {
		t.Fatal(err)
	}
	e.runDue()
	if got := e.call(refused.ID); got.AnalysisError == nil || !strings.Contains(got.AnalysisError.Message, "401") {
		t.Errorf("the refused call's error: %+v, want the provider's", got.AnalysisError)
	}
	if n := e.callEvents(data.EventCallAnalysisFailed); n[refused.ID] != 1 {
		t.Errorf("call.analysis_failed events: %v, want one of the refused call", n)
	}
}
