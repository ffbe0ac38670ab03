package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/strictjson"
)

// analysisEnv is the services on the engine the tests run on, a clock the test moves,
// and a provider stand-in that is every agent's model.
type analysisEnv struct {
	t     *testing.T
	svc   *service.Services
	store service.Store
	clock *jobClock
	model *llmtest.Server
	ctx   context.Context // the owner of ws
	ws    string
}

func newAnalysisEnv(t *testing.T, provider string, opts ...llmtest.Option) *analysisEnv {
	t.Helper()
	clock := newJobClock()
	store := testkit.OpenEngine(t)
	model := llmtest.New(t, provider, opts...)
	svc := testkit.Services(t, store, func(o *service.Options) {
		o.Now = clock.now
		o.Analysis = service.AnalysisOptions{Models: func(cfg data.LLMConfig) (llm.Client, error) {
			return llm.New(llm.ConfigOf(cfg), model.Options())
		}}
	})
	u, err := svc.Users.CreateUser(context.Background(), data.UserCreate{Name: "Owner", Email: "owner@example.com", Password: "owner-password"})
	if err != nil {
		t.Fatal(err)
	}
	return &analysisEnv{t: t, svc: svc, store: store, clock: clock, model: model, ctx: testkit.As(u), ws: u.PersonalWorkspaceID}
}

// bookingConfig is an analysis_config with a field of each type, a success criterion and
// a summary.
const bookingConfig = `{"fields":[
	{"name":"outcome","type":"enum","description":"How the call ended","choices":["booked","declined"],"required":true},
	{"name":"guests","type":"number","description":"How many guests"},
	{"name":"vip","type":"boolean","description":"A VIP guest"},
	{"name":"day","type":"date","description":"The day booked"},
	{"name":"note","type":"string","description":"Anything else"}],
	"success_criterion":"A table was booked.","summary":true,"auto":%v}`

// agent creates and publishes an agent whose model is the stand-in, with analysis as
// its analysis_config (JSON), and returns its id.
func (e *analysisEnv) agent(analysis string) string {
	e.t.Helper()
	llmJSON, _ := json.Marshal(e.model.LLMConfig())
	var in data.AgentCreate
	body := fmt.Sprintf(`{"name":"Bookings","llm_config":%s,"analysis_config":%s}`, llmJSON, analysis)
	if err := strictjson.Decode([]byte(body), &in); err != nil {
		e.t.Fatal(err)
	}
	a, err := e.svc.Agents.CreateAgent(e.ctx, in)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.svc.Agents.PublishAgent(e.ctx, a.ID, data.PublishRequest{}); err != nil {
		e.t.Fatal(err)
	}
	return a.ID
}

// endedCall registers an ended call of agent whose transcript names marker.
func (e *analysisEnv) endedCall(agent, marker string) *data.Call {
	e.t.Helper()
	ended := data.CallEnded
	c, err := e.svc.Calls.RegisterCall(e.ctx, data.CallCreate{AgentID: agent, Direction: data.DirectionWeb, Status: &ended,
		Transcript: []data.TranscriptItem{{Role: "agent", Content: "Hello, Bella's."}, {Role: "user", Content: "A table for four, " + marker + "."}}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.clock.move(time.Millisecond) // one call a millisecond: ids and created_at apart
	return c
}

func (e *analysisEnv) call(id string) *data.Call {
	e.t.Helper()
	c, err := e.svc.Calls.Call(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *analysisEnv) job(id string) *data.Job {
	e.t.Helper()
	j, err := e.svc.Jobs.Job(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// runner is a runner on the env's clock, leases of a minute, no jitter.
func (e *analysisEnv) runner(owner string) *service.JobRunner {
	return e.svc.Jobs.NewRunner(service.RunnerOptions{Owner: owner, Lease: time.Minute, Heartbeat: time.Hour, Now: e.clock.now, Jitter: noJitter})
}

// runDue runs every due job once, to its end.
func (e *analysisEnv) runDue() {
	e.t.Helper()
	if _, err := e.runner("test").RunDue(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// analyzedEvents counts the call.analyzed events of each call.
func (e *analysisEnv) analyzedEvents() map[string]int { return e.callEvents(data.EventCallAnalyzed) }

// callEvents counts the events of type typ of each call.
func (e *analysisEnv) callEvents(typ string) map[string]int {
	e.t.Helper()
	out := map[string]int{}
	req := data.PageRequest{PerPage: 100}
	for {
		events, page, err := e.svc.Audit.ListAuditLog(e.ctx, data.AuditFilter{Type: typ}, req)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, ev := range events {
			var c struct{ ID string }
			json.Unmarshal(ev.Data, &c)
			out[c.ID]++
		}
		if page.NextCursor == nil {
			return out
		}
		req.Cursor = *page.NextCursor
	}
}

// answer is the model's answer of args in the form the extraction asks of the env's
// provider: a structured output's JSON text, or a call of the analysis tool (Bedrock).
func (e *analysisEnv) answer(args string) llmtest.Reply {
	c, err := llm.New(e.model.Config(), e.model.Options())
	if err != nil {
		e.t.Fatal(err)
	}
	if llm.StructuredOutput(c) {
		return llmtest.JSON(args)
	}
	return llmtest.Calls(llm.ToolCall{Name: "record_analysis", Arguments: args})
}

const goodAnalysis = `{"outcome":"booked","guests":4,"vip":null,"day":"2026-06-05","note":null,"call_successful":true,"summary":"A table for four on June 5."}`

// markerOf finds which call a request is about: the marker in its transcript.
func markerOf(r llmtest.Request) string {
	text := r.Messages[0].Content
	i := strings.Index(text, "call-")
	if i < 0 {
		return ""
	}
	return strings.TrimRight(strings.Fields(text[i:])[0], ".")
}

func decodeStrict(body string, v any) error { return strictjson.Decode([]byte(body), v) }
