package server_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// TestOpenAPIWebhookPayloadsMatchLifeCycleEvents goes through the life cycle on a real
// server (tests, a run, a forced publish, a rollout, a restore, a call start and its call,
// a job that fails for good, a conversation, a campaign, one that pauses itself) and
// validates every event recorded, envelope and data, as a webhook receiver would get it,
// against its delivery's schema in the document: types, required members, enums, nested
// records and allOf payloads; and every member sent, at every depth the document
// describes, must be one it defines.
func TestOpenAPIWebhookPayloadsMatchLifeCycleEvents(t *testing.T) {
	body, doc := openapiDocument(t)
	// The agent's api_key: the call start answers it in clear, and no event may carry it.
	const secret = "sk-lifecycle-secret-0123456789"
	e := newTestsEnv(t, llmtest.WithAPIKey(secret))
	tok := e.tok

	agent := e.bookingAgent(t, "Trattoria")
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, tok, map[string]any{"name": "Trattoria Roma",
		"analysis_config": map[string]any{"fields": []any{map[string]any{"name": "outcome", "type": "enum", "description": "How it ended",
			"choices": []string{"booked", "declined"}, "required": true}}}}), 200)
	required := e.createTest(t, agent, scripted("says goodbye", []string{"hello"},
		map[string]any{"type": "says", "pattern": "never said"}))
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent+"/tests/"+required["id"].(string), tok,
		map[string]any{"required_for_publish": true}), 200)
	spare := e.createTest(t, agent, scripted("spare", []string{"hello"}, map[string]any{"type": "says", "pattern": "Welcome"}))
	testkit.Expect(t, e.Do("DELETE", "/api/v1/agents/"+agent+"/tests/"+spare["id"].(string), tok, nil), 204)
	if run := e.run(t, agent, nil); run["status"] != data.TestFailed {
		t.Fatalf("run: %v, want failed", run["status"])
	}
	e.publish(t, tok, agent, true, 204) // version 1, past the gate
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent, tok, map[string]any{"name": "Trattoria Due"}), 200)
	e.publish(t, tok, agent, true, 204) // version 2
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+agent+"/rollout", tok, map[string]any{
		"variants": []any{map[string]any{"version": 1, "weight": 50}, map[string]any{"version": 2, "weight": 50}}}), 200)
	testkit.Expect(t, e.Do("DELETE", "/api/v1/agents/"+agent+"/rollout", tok, nil), 204)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/versions/1/restore", tok, nil), 200)

	// A call from its start to its end, then an analysis from the runtime.
	r := e.Do("POST", "/api/v1/numbers", tok, map[string]any{"phone_number": startNumber, "provider": "sip", "outbound_agent_id": agent})
	testkit.Expect(t, r, 201)
	number := r.Data()["id"].(string)
	runtime := keyWithScopes(t, e.Server, data.ScopeCallsRuntime)
	r = e.Do("POST", "/api/v1/calls/start", runtime, map[string]any{"agent_id": agent, "direction": "outbound",
		"from_number": startNumber, "to_number": "+14155550177", "variables": map[string]any{"shop": "Trattoria"}})
	testkit.Expect(t, r, 201)
	if !strings.Contains(string(r.Body), secret) {
		t.Fatalf("the call start does not answer the agent's api_key: the check below would prove nothing: %s", r.Body)
	}
	call := r.Data()["call"].(map[string]any)["id"].(string)
	testkit.Expect(t, e.Do("PUT", "/api/v1/calls/"+call, runtime, map[string]any{"status": "ongoing"}), 204)
	testkit.Expect(t, e.Do("PUT", "/api/v1/calls/"+call, runtime, map[string]any{"status": "ended", "disconnection_reason": "user_hangup"}), 204)
	testkit.Expect(t, e.Do("PUT", "/api/v1/calls/"+call, runtime, map[string]any{"analysis": map[string]any{"outcome": "booked", "call_successful": true}}), 204)
	// Post-call analysis, which the fixture's model answers in free text: a misfit, and a
	// job that fails for good (call.analysis_failed and job.failed).
	r = e.Do("POST", "/api/v1/calls/"+call+"/analyze", tok, nil)
	testkit.Expect(t, r, 202)
	waitJob(t, e.Server, tok, r.Data()["id"].(string), data.JobFailed)

	// A conversation, which becomes a web call.
	conv := e.start(t, agent, map[string]any{"variables": map[string]any{"shop": "Trattoria"}}, 201).Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+conv+"/end", tok, nil), 200)

	// A campaign, paused, resumed, canceled.
	r = e.Do("POST", "/api/v1/campaigns", tok, map[string]any{"name": "Reminders", "agent_id": agent, "number_id": number,
		"window": everyDay, "max_concurrent": 1, "recipients": []any{map[string]any{"phone_number": "+14155550178",
			"variables": map[string]any{"shop": "Trattoria"}}}})
	testkit.Expect(t, r, 201)
	campaign := r.Data()["id"].(string)
	for _, step := range []string{"pause", "resume", "cancel"} {
		testkit.Expect(t, e.Do("POST", "/api/v1/campaigns/"+campaign+"/"+step, tok, nil), 200)
	}
	// Another, which pauses itself with the month's call minutes used up: campaign.paused
	// with its pause_reason.
	r = e.Do("POST", "/api/v1/campaigns", tok, map[string]any{"name": "Follow-ups", "agent_id": agent, "number_id": number,
		"window": everyDay, "max_concurrent": 1, "recipients": []any{map[string]any{"phone_number": "+14155550179",
			"variables": map[string]any{"shop": "Trattoria"}}}})
	testkit.Expect(t, r, 201)
	if _, err := e.Svc.Subscriptions.SetSubscription(context.Background(), e.Owner.WorkspaceID,
		data.SubscriptionSet{Limits: map[string]int64{data.LimitCallMinutes: 0}}); err != nil {
		t.Fatal(err)
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/dial-tasks/claim", runtime, map[string]any{"max": 1}), 200)
	if got := e.Do("GET", "/api/v1/campaigns/"+r.Data()["id"].(string), tok, nil).Data(); got["pause_reason"] != data.PauseCallMinutesUsedUp {
		t.Fatalf("the second campaign: %v, pause_reason %v; want it paused itself", got["status"], got["pause_reason"])
	}

	validate := deliverySchemas(t, body)
	seen := map[string]int{}
	err := e.Store.View(context.Background(), func(tx service.Tx) error { // either engine
		return tx.EventsNewestFirst(e.Owner.WorkspaceID, func(ev *data.Event) (bool, error) {
			seen[ev.Type]++
			envelope, err := ev.Envelope() // a delivery's body, and a stream message's data
			if err != nil {
				return false, err
			}
			for _, s := range []string{secret, runtime, tok} {
				if strings.Contains(string(envelope), s) {
					t.Errorf("%s carries a credential: %s", ev.Type, envelope)
				}
			}
			if err := validate(ev.Type, envelope); err != nil {
				t.Errorf("%s does not match its delivery's schema: %v\n%s", ev.Type, err, envelope)
			}
			var payload any
			if err := json.Unmarshal(ev.Data, &payload); err != nil {
				return false, err
			}
			schema := dig(t, doc, "webhooks", ev.Type, "post", "requestBody", "content", "application/json", "schema", "properties", "data")
			for _, path := range undefinedMembers(doc, schema, payload, "data") {
				t.Errorf("%s: %s is sent but the document does not define it", ev.Type, path)
			}
			return true, nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each state change is told once: the counts are those of the steps above.
	want := map[string]int{
		data.EventAgentCreated: 1, data.EventAgentUpdated: 2, data.EventAgentPublished: 2, data.EventAgentPublishedUntested: 2,
		data.EventAgentRestored: 1, data.EventAgentTestCreated: 2, data.EventAgentTestUpdated: 1, data.EventAgentTestDeleted: 1,
		data.EventTestRunQueued: 1, data.EventTestRunStarted: 1, data.EventTestRunProgress: 1, data.EventTestRunCompleted: 1,
		data.EventRolloutUpdated: 1, data.EventRolloutEnded: 1,
		// The started call's, and the conversation's web call, registered ended.
		data.EventCallRegistered: 2, data.EventCallStarted: 1, data.EventCallEnded: 2, data.EventCallAnalyzed: 1, data.EventCallAnalysisFailed: 1,
		data.EventCampaignCreated: 2, data.EventCampaignStarted: 2, data.EventCampaignPaused: 2, data.EventCampaignResumed: 1,
		data.EventCampaignCanceled: 1,
		data.EventJobFailed:        1,
	}
	for typ, n := range want {
		if seen[typ] != n {
			t.Errorf("%d %s events, want %d (seen: %v)", seen[typ], typ, n, seen)
		}
	}
}

// deliverySchemas compiles each event type's delivery schema from the document (served as
// docs/openapi.json is) and returns a validator of an envelope by its type.
func deliverySchemas(t *testing.T, body []byte) func(typ string, envelope []byte) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "https://voiceapi.invalid/openapi.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	compiled := map[string]*jsonschema.Schema{}
	return func(typ string, envelope []byte) error {
		s := compiled[typ]
		if s == nil {
			var err error
			if s, err = c.Compile(url + "#/webhooks/" + typ + "/post/requestBody/content/application~1json/schema"); err != nil {
				t.Fatalf("compiling %s's schema: %v", typ, err)
			}
			compiled[typ] = s
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(envelope)))
		if err != nil {
			return err
		}
		return s.Validate(v)
	}
}

// undefinedMembers lists the members of v (at path) that schema, as far as it describes
// objects by their properties (through $ref, allOf, oneOf/anyOf, items), does not define.
// An object schema without properties (a free-form map) is open.
func undefinedMembers(doc map[string]any, schema any, v any, path string) []string {
	s, _ := schema.(map[string]any)
	if s == nil {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		s, _ = doc["components"].(map[string]any)["schemas"].(map[string]any)[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		if s == nil {
			return []string{path + ": unresolved " + ref}
		}
	}
	var out []string
	switch x := v.(type) {
	case map[string]any:
		props := map[string]any{}
		open := false
		collect := func(s map[string]any) {
			p, ok := s["properties"].(map[string]any)
			if !ok {
				open = true
			}
			for k, v := range p {
				props[k] = v
			}
		}
		if all, ok := s["allOf"].([]any); ok {
			for _, part := range all {
				ps, _ := part.(map[string]any)
				if ref, ok := ps["$ref"].(string); ok {
					ps = doc["components"].(map[string]any)["schemas"].(map[string]any)[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
				}
				collect(ps)
			}
		} else if alts := alternatives(s); alts != nil {
			// The member is defined when one alternative defines it.
			best := []string(nil)
			for i, a := range alts {
				got := undefinedMembers(doc, a, v, path)
				if i == 0 || len(got) < len(best) {
					best = got
				}
			}
			return best
		} else {
			collect(s)
		}
		if open {
			return nil
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		}) {
			if props[k] == nil {
				out = append(out, path+"."+k)
				continue
			}
			out = append(out, undefinedMembers(doc, props[k], x[k], path+"."+k)...)
		}
	case []any:
		for i, item := range x {
			out = append(out, undefinedMembers(doc, s["items"], item, path+"."+strconv.Itoa(i))...)
		}
	}
	return out
}

func alternatives(s map[string]any) []any {
	if a, ok := s["oneOf"].([]any); ok {
		return a
	}
	if a, ok := s["anyOf"].([]any); ok {
		return a
	}
	return nil
}

// waitJob reads job id until it is final, and fails unless it ended with status.
func waitJob(t *testing.T, s *testkit.Server, token, id, status string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := s.Do("GET", "/api/v1/jobs/"+id, token, nil)
		testkit.Expect(t, r, 200)
		switch got := r.Data()["status"]; {
		case got == status:
			return
		case got == data.JobSucceeded || got == data.JobFailed || got == data.JobCanceled:
			t.Fatalf("job %s ended %v, want %s: %s", id, got, status, r.Body)
		case time.Now().After(deadline):
			t.Fatalf("job %s has not ended: %s", id, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
