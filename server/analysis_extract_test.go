package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/service"
)

// extractEnv is a server whose analysis models reach a provider's stand-in, with a
// published agent of analysisGroup's fields on that provider.
type extractEnv struct {
	*testkit.Server
	stand *llmtest.Server
	agent string
}

func newExtractEnv(t *testing.T, provider string) *extractEnv {
	t.Helper()
	stand := llmtest.New(t, provider)
	ls := cli.LLMSettings{BaseURLs: stand.Options().BaseURLs, AllowURLPrefixes: []string{stand.URL + "/"}}
	s := testkit.NewServerWith(t, nil, func(svc *service.Services) { svc.Analysis.Configure(cli.AnalysisOptions(ls)) })
	cfg, _ := structToMap(stand.LLMConfig())
	a := s.Do("POST", "/api/v1/agents", s.Owner.Token, map[string]any{"name": "Bookings", "llm_config": cfg, "analysis_config": analysisGroup()})
	testkit.Expect(t, a, 201)
	id := a.Data()["id"].(string)
	testkit.Expect(t, s.Do("POST", "/api/v1/agents/"+id+"/publish", s.Owner.Token, nil), 204)
	return &extractEnv{Server: s, stand: stand, agent: id}
}

// analyze registers an ended call, asks for its analysis, runs the job and returns the
// call as GET shows it.
func (e *extractEnv) analyze(t *testing.T) map[string]any {
	t.Helper()
	tok := e.Owner.Token
	c := e.Do("POST", "/api/v1/calls", tok, map[string]any{"agent_id": e.agent, "direction": "web", "status": "ended",
		"transcript": []any{map[string]any{"role": "user", "content": "A table for four on June 5.", "start_ms": 0}}})
	testkit.Expect(t, c, 201)
	id := c.Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/calls/"+id+"/analyze", tok, nil), 202)
	if _, err := e.Svc.Jobs.NewRunner(service.RunnerOptions{}).RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := e.Do("GET", "/api/v1/calls/"+id, tok, nil)
	testkit.Expect(t, r, 200)
	return r.Data()
}

const fitExtract = `{"outcome":"booked","party_size":4,"wants_newsletter":null,"visit_date":"2026-06-05","notes":null,"call_successful":true,"summary":"A table for four."}`

// TestExtractionFormsThroughTheAPI: POST /calls/{id}/analyze on an OpenAI-compatible
// agent asks for structured output (response_format json_schema, strict, no tools) and
// stores its JSON object; on bedrock_claude it forces the record_analysis tool call and
// stores its input. Both record the tokens as usage.analysis.
func TestExtractionFormsThroughTheAPI(t *testing.T) {
	for _, provider := range []string{data.LLMInternal, data.LLMMistral, data.LLMBedrockClaude} {
		t.Run(provider, func(t *testing.T) {
			e := newExtractEnv(t, provider)
			structured := provider != data.LLMBedrockClaude
			e.stand.Respond(func(r llmtest.Request) llmtest.Reply {
				if structured {
					return llmtest.JSON(fitExtract)
				}
				return llmtest.Calls(llm.ToolCall{Name: "record_analysis", Arguments: fitExtract})
			})
			call := e.analyze(t)
			seen := e.stand.Last()
			if structured && (seen.ResponseSchema == nil || seen.ResponseSchema.Name != "record_analysis" || len(seen.Tools) != 0) {
				t.Errorf("structured output not asked: %s", seen.Body)
			}
			if !structured && (seen.ResponseSchema != nil || seen.ToolChoice != (llm.ToolChoice{Mode: "tool", Name: "record_analysis"})) {
				t.Errorf("the tool call not forced: %s", seen.Body)
			}
			if call["analysis_source"] != "llm" || path(call, "analysis.outcome") != "booked" || path(call, "analysis.party_size") != 4.0 ||
				call["analysis_error"] != nil {
				t.Errorf("call %v", call)
			}
			if u, _ := path(call, "usage.analysis").([]any); len(u) != 1 || u[0].(map[string]any)["provider"] != provider {
				t.Errorf("usage %v", call["usage"])
			}
		})
	}
}

// TestStructuredMisfitThroughTheAPI: a structured answer that does not fit, twice, is
// the call's analysis_error, never its analysis; the retry carried the faults.
func TestStructuredMisfitThroughTheAPI(t *testing.T) {
	e := newExtractEnv(t, data.LLMGroq)
	e.stand.Queue(llmtest.JSON(`{"outcome":"maybe"}`), llmtest.JSON("not JSON at all"))
	call := e.analyze(t)
	if call["analysis"] != nil || call["analysis_source"] != nil || !strings.Contains(path(call, "analysis_error.message").(string), "did not fit") {
		t.Errorf("call %v", call)
	}
	reqs := e.stand.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1].LastUserText(), "analysis.outcome") || reqs[1].ResponseSchema == nil {
		t.Errorf("%d requests; the retry asked %q", len(reqs), reqs[len(reqs)-1].LastUserText())
	}
}
