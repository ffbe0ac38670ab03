package server_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// exampleCheck checks one block, given as docJSON reads it.
type exampleCheck func(e *docEnv, t *testing.T, reqs []docRequest)

// docExample says what one json block of the docs is and how it is checked.
type docExample struct {
	first string       // the block's first line, trimmed
	check exampleCheck // nil: not an API body (a state file, say), why says what it is
	why   string
}

// docEnv is the workspace the examples run in: a published agent on the provider
// stand-in (conversations, tests), runtime.md's agent answering +14155550123, a draft
// agent the configuration fragments are put on, and a calls:runtime key. ids maps a
// placeholder's prefix to the record it stands for ("agt": the stand-in's agent).
type docEnv struct {
	*convEnv
	ids     map[string]string
	runtime string
	draft   string // the agent configuration fragments are PUT on
	// frontDesk is runtime.md's agent, published, answering docNumber: a provider key,
	// a knowledge base, a default variable, a time zone.
	frontDesk string
	imported  *importedDoc // export-import.md's document, once imported
	figures   string       // the agent of the figures' examples, once made
	skew      atomic.Int64 // nanoseconds the env's clock was moved on
}

func (e *docEnv) runtimeAgent(t *testing.T) string {
	t.Helper()
	r := e.Do("POST", "/api/v1/agents", e.tok, map[string]any{"name": "Front desk",
		"llm_config": map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "temperature": 0.5,
			"api_key": "gsk_the-key-in-clear", "knowledge_base_ids": []any{e.ids["kb"]}},
		"prompt_config": map[string]any{"prompt": "You answer for Acme. The caller is {{customer_name}}.",
			"welcome_message": "Hello {{customer_name}}!", "default_variables": map[string]any{"customer_name": "there"},
			"timezone": "Europe/Paris"}})
	testkit.Expect(t, r, 201)
	id := r.Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+id+"/publish", e.tok, nil), 204)
	return id
}

const docNumber = "+14155550123"

func newDocEnv(t *testing.T) *docEnv {
	t.Helper()
	// The env's clock runs from campaigns.md's Monday, 09:30 in New York, inside that
	// campaign's window and after its start_at, so its recipient is due.
	// A check may move it on (skew), never back.
	base, begun := time.Date(2026, 3, 9, 13, 30, 0, 0, time.UTC), time.Now()
	e := &docEnv{}
	clock := func() time.Time { return base.Add(time.Since(begun) + time.Duration(e.skew.Load())) }
	e.convEnv = newConvEnv(t, func(o *bolt.Options) { o.Now = clock })
	c := e.convEnv
	e.ids = map[string]string{"ws": c.Owner.WorkspaceID}
	// Post-call analysis reaches the stand-in too (analysis.md's usage.analysis).
	e.Svc.Analysis.Configure(cli.AnalysisOptions(cli.LLMSettings{BaseURLs: e.stand.Options().BaseURLs,
		AllowURLPrefixes: []string{e.stand.URL + "/"}}))
	// book_table is the tool testing-agents.md's test mocks.
	bookTable := map[string]any{"name": "book_table", "type": "custom_function", "description": "Book a table",
		"http_method": "POST", "api_endpoint": "https://api.example.com/bookings",
		"custom_function_parameters": `{"type":"object","properties":{"people":{"type":"number"}}}`}
	// hang_up lets its test expect the agent to end the call (ends_with agent_ended).
	hangUp := map[string]any{"name": "hang_up", "type": "end_call"}
	e.ids["agt"] = e.createAgent(t, map[string]any{"name": "Concierge",
		"prompt_config": map[string]any{"prompt": "You answer for Acme.", "welcome_message": "Hello!"},
		"llm_config":    e.llmConfig(map[string]any{"tools": []any{bookTable, hangUp}})})
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+e.ids["agt"]+"/publish", e.tok, nil), 204)
	r := e.Do("POST", "/api/v1/knowledge-bases", e.tok, map[string]any{"name": "Policies"})
	testkit.Expect(t, r, 201)
	e.ids["kb"] = r.Data()["id"].(string)
	e.frontDesk = e.runtimeAgent(t)
	r = e.Do("POST", "/api/v1/numbers", e.tok, map[string]any{"phone_number": docNumber, "provider": "sip",
		"inbound_agent_id": e.frontDesk, "outbound_agent_id": e.frontDesk})
	testkit.Expect(t, r, 201)
	e.ids["num"] = r.Data()["id"].(string)
	e.draft = e.createAgent(t, map[string]any{"name": "Fragments"})
	e.runtime = keyWithScopes(t, c.Server, data.ScopeCallsRuntime)
	// subscription.md shows a plan with some limits set, as an operator sets them.
	limits := map[string]int64{"numbers": 10, "call_minutes_per_month": 1000, "concurrent_calls": 20}
	if _, err := e.Svc.Subscriptions.SetSubscription(context.Background(), e.ids["ws"], data.SubscriptionSet{Limits: limits}); err != nil {
		t.Fatal(err)
	}
	return e
}

// send sends each body of the block (to the block's own request line when it has one),
// expects status and the body's members in the answer's record, but those named in
// notEchoed (a campaign's recipients become records of their own).
func send(method, path string, status int, notEchoed ...string) exampleCheck {
	return func(e *docEnv, t *testing.T, reqs []docRequest) {
		for _, rq := range reqs {
			m, p := method, path
			if rq.method != "" {
				m, p = rq.method, rq.path
			}
			body := e.substitute(t, stripElided(rq.body))
			r := e.Do(m, e.substitutePath(t, p), e.tok, body)
			testkit.Expect(t, r, status)
			// What was sent is what the record now holds, member for member: a member
			// the API took under another name, or dropped, shows here.
			echoed := map[string]any{}
			for k, v := range body.(map[string]any) {
				if !slices.Contains(notEchoed, k) {
					echoed[k] = v
				}
			}
			expectMember(t, echoed, r, false, "data")
		}
	}
}

// agentFragment puts a fragment of an agent's configuration on the draft agent, as
// agents.md's "Each body below is complete for its provider or tool type" means.
func agentFragment(e *docEnv, t *testing.T, reqs []docRequest) {
	send("PUT", "/api/v1/agents/"+e.draft, 200)(e, t, reqs)
}

// answerOf makes the request and checks the doc's example against its answer.
func answerOf(method, path string, whole bool) exampleCheck {
	return func(e *docEnv, t *testing.T, reqs []docRequest) {
		r := e.Do(method, e.substitutePath(t, path), e.tok, nil)
		testkit.Expect(t, r, 200)
		expectShape(t, reqs[0].body, r, whole)
	}
}

// block is the text of another block, for a check that needs its neighbour (an answer
// checked against the request documented beside it).
func (e *docEnv) block(t *testing.T, key string) string {
	t.Helper()
	for _, b := range docBlocks(t) {
		if b.key == key {
			return b.text
		}
	}
	t.Fatalf("no block %s", key)
	return ""
}

var docExamples = map[string]docExample{
	"agents.md#1":  {first: `{"data": [`, check: versionDiff},
	"agents.md#2":  {first: `{"llm_config": {"provider": "internal", "model": "my-llama-70b", "temperature": 0.2,`, check: agentFragment},
	"agents.md#3":  {first: `{"llm_config": {"provider": "azure", "deployment": "gpt-4o-prod",`, check: agentFragment},
	"agents.md#4":  {first: `{"llm_config": {"provider": "mistral", "model": "mistral-small-latest", "temperature": 0.4,`, check: agentFragment},
	"agents.md#5":  {first: `{"llm_config": {"provider": "bedrock_claude", "model": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",`, check: agentFragment},
	"agents.md#6":  {first: `{"llm_config": {"provider": "groq", "model": "openai/gpt-oss-120b", "temperature": 0.7,`, check: agentFragment},
	"agents.md#7":  {first: `{"stt_config": {"provider": "deepgram", "model": "nova-3"}}`, check: agentFragment},
	"agents.md#8":  {first: `{"stt_config": {"provider": "assemblyai", "model": "universal-streaming-english"}}`, check: agentFragment},
	"agents.md#9":  {first: `{"tts_config": {"provider": "elevenlabs", "model": "eleven_flash_v2_5",`, check: agentFragment},
	"agents.md#10": {first: `{"tts_config": {"provider": "cartesia", "model": "sonic-3",`, check: agentFragment},
	"agents.md#11": {first: `{"tts_config": {"provider": "rime", "model": "arcana", "speaker": "luna",`, check: agentFragment},
	"agents.md#12": {first: `{"llm_config": {"tools": [`, check: agentFragment},

	"analysis.md#1": {first: `"analysis_config": {`, check: agentFragment},
	"analysis.md#2": {first: `"usage": {`, check: callUsage},
	"analysis.md#3": {first: `{"currency": "USD", "prices": [`, check: send("PUT", "/api/v1/price-table", 200)},
	"analysis.md#4": {first: `"cost": {"currency": "USD", "total": "0.023045", "total_micros": 23045,`, check: callCost},
	"analysis.md#5": {first: `{"data": {"agent_id": "agt_…", "field": "outcome", "type": "enum", "agent_version": null,`, check: analysisFigures},

	"analytics.md#1": {first: `{"data": {`, check: callFigures},

	"api.md#1": {first: `{"message": "The name field is required.", "code": "validation_failed",`, check: errorShape},
	"api.md#2": {first: `{"data": {"id": "kb_01JD6…", "name": "Support", …}, "access": {"write": false}}`, check: kbRecord},

	"calls.md#1": {first: `"search": {`, check: searchMember},
	"calls.md#2": {first: `PUT /api/v1/workspaces/ws_…`, check: send("", "", 200)},
	"calls.md#3": {first: `{"type": "retention.swept", "data": {"calls_deleted": 412, "knowledge_files_deleted": 3, "calls_on_hold": 2, "conversations_deleted": 5, "campaigns_deleted": 1}}`, check: retentionEvent},

	"campaigns.md#1": {first: `{`, check: send("POST", "/api/v1/campaigns", 201, "recipients")},
	"campaigns.md#2": {first: `{"data": {"tasks": [{"campaign_id": "cmp_…", "recipient_id": "rcp_…", "attempt": 1,`, check: dialClaim},
	"campaigns.md#3": {first: `{"message": "The suppression list holds at most 500000 numbers: it has 499998, and the 3 new here would make 500001. Nothing was added; remove numbers from the list first.",`, check: suppressionBoundAnswer},

	"conversations.md#1": {first: `{"llm_config": {"provider": "internal", "base_url": "http://127.0.0.1:11434/v1",`, check: agentFragment},
	"conversations.md#2": {first: `{"llm_config": {"provider": "groq", "model": "llama-3.3-70b-versatile",`, check: agentFragment},
	"conversations.md#3": {first: `{"llm_config": {"provider": "mistral", "model": "mistral-small-latest", "api_key": "..."}}`, check: agentFragment},
	"conversations.md#4": {first: `{"llm_config": {"provider": "azure", "endpoint": "https://my-resource.openai.azure.com",`, check: agentFragment},
	"conversations.md#5": {first: `{"llm_config": {"provider": "bedrock_claude", "region": "us-east-1",`, check: agentFragment},
	"conversations.md#6": {first: `{"version": "draft", "variables": {"hotel": "Grand Hotel", "nights": 3, "vip": true}}`, check: conversationRequest},
	"conversations.md#7": {first: `{"data": {"id": "conv_01JD…", "workspace_id": "ws_01JD…", "agent_id": "agt_01JD…", "agent_version": null,`, check: conversationAnswer},
	"conversations.md#8": {first: `{"data": {"conversation_id": "conv_01JD…", "status": "active", "disconnection_reason": null, "call_id": null,`, check: conversationTurn},

	"export-import.md#1": {first: `{`, check: exportDocument},
	"export-import.md#2": {first: `{`, check: importDocument},

	"knowledge-bases.md#1": {first: `{"data": {`, check: kbRecord},
	"knowledge-bases.md#2": {first: `{"data": [{"chunk_id": "src_01JD6…:0", "source_id": "src_01JD6…", "source_type": "files",`, check: kbQuery},
	"knowledge-bases.md#3": {first: `"embeddings": {"status": "embedding", "model": "text-embedding-3-small",`, check: kbEmbeddings},

	"redaction.md#1": {first: `{"detectors": ["card", "email", "phone", "iban", "ssn"],`, check: redactionSetting},

	"runtime.md#1": {first: `{"direction": "inbound", "to_number": "+14155550123", "from_number": "+15551230000",`, check: runtimeRequest},
	"runtime.md#2": {first: `{"data": {`, check: callStartAnswer},

	"subscription.md#1": {first: `{"data": {`, check: answerOf("GET", "/api/v1/subscription", true)},

	"testing-agents.md#1": {first: `POST /api/v1/agents/{agent_id}/tests`, check: send("", "", 201)},
	"testing-agents.md#2": {first: `{"data": {"id": "trun_01M8…", "workspace_id": "ws_…", "agent_id": "agt_…", "agent_version": null,`, check: testRunAnswer},
	"testing-agents.md#3": {first: `{"simulation": {"provider": "groq", "model": "llama-3.3-70b-versatile", "temperature": 0.7, "api_key": "gsk_…"}}`, check: send("PUT", "/api/v1/workspaces/{workspace_id}", 200)},
	"testing-agents.md#4": {first: `{"message": "Required tests did not pass on this draft: \"books a table\" (failed in trun_01M8…). Run the tests on this draft (POST /api/v1/agents/{agent_id}/test-runs), or publish with {\"force\": true} (owners and admins).",`, check: testsFailedAnswer},

	"webhooks.md#1": {first: `{`, check: webhookEnvelope},
	"webhooks.md#2": {first: `{"id": "evt_01M7…", "type": "webhook.test", "created_at": "…", "workspace_id": "ws_…",`, check: webhookTestEvent},
	"webhooks.md#3": {first: `{"id": "evt_…", "type": "workspace.updated", "created_at": "…", "workspace_id": "ws_…",`, check: auditEvent},
}
