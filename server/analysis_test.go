package server_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

// analysisEnv is a server with a published agent whose version declares analysisGroup's
// fields.
type analysisEnv struct {
	*env
	agent string
}

func newAnalysisEnv(t *testing.T) *analysisEnv {
	e := newEnv(t)
	a := e.createAgent(e.Owner.Token, map[string]any{"name": "Bookings", "analysis_config": analysisGroup()})
	e.publish(e.Owner.Token, a["id"].(string), nil)
	return &analysisEnv{env: e, agent: a["id"].(string)}
}

func (e *analysisEnv) callBody(analysis map[string]any) map[string]any {
	return map[string]any{"agent_id": e.agent, "direction": "web", "status": "ended", "analysis": analysis,
		"transcript": []any{map[string]any{"role": "user", "content": "A table for four.", "start_ms": 0}}}
}

func (e *analysisEnv) callCount() int {
	r := e.do("GET", "/api/v1/calls?per_page=100", e.Owner.Token, nil)
	expect(e.t, r, 200)
	return len(r.List())
}

// TestCheckedAnalysis: a runtime's analysis is checked against the call's agent version:
// a declared field of the wrong type, an enum value outside its choices, a required
// field missing is 422 naming analysis.<field> and stores nothing; undeclared keys are
// kept; a stored analysis tells its source and time.
func TestCheckedAnalysis(t *testing.T) {
	e := newAnalysisEnv(t)
	tok := e.Owner.Token
	for _, c := range []struct {
		name     string
		analysis map[string]any
		faults   []string
	}{
		{"an enum value outside its choices", map[string]any{"outcome": "maybe"}, []string{"analysis.outcome"}},
		{"the required field missing", map[string]any{"party_size": 2}, []string{"analysis.outcome"}},
		{"every type wrong at once", map[string]any{"outcome": 1, "party_size": "two", "wants_newsletter": "yes", "visit_date": "tomorrow", "notes": false},
			[]string{"analysis.outcome", "analysis.party_size", "analysis.wants_newsletter", "analysis.visit_date", "analysis.notes"}},
		{"call_successful not a boolean", map[string]any{"outcome": "booked", "call_successful": "yes"}, []string{"analysis.call_successful"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/api/v1/calls", tok, e.callBody(c.analysis))
			expect(t, r, 422)
			expectFields(t, r, c.faults...)
			if n := e.callCount(); n != 0 {
				t.Fatalf("a refused call was stored: %d calls", n)
			}
		})
	}
	analysis := map[string]any{"outcome": "booked", "party_size": 4, "visit_date": "2026-06-05", "mood": "happy"}
	r := e.do("POST", "/api/v1/calls", tok, e.callBody(analysis))
	expect(t, r, 201)
	call := r.Data()
	id := call["id"].(string)
	if call["analysis_source"] != "runtime" || call["analyzed_at"] == nil || path(call, "analysis.mood") != "happy" || call["analysis_error"] != nil {
		t.Fatalf("stored call: %v", call)
	}
	// A PUT that breaks a rule leaves the stored call as it was.
	r = e.do("PUT", "/api/v1/calls/"+id, tok, map[string]any{"analysis": map[string]any{"outcome": "booked", "party_size": "4"}})
	expect(t, r, 422)
	expectFields(t, r, "analysis.party_size")
	if got := e.do("GET", "/api/v1/calls/"+id, tok, nil).Data(); !reflect.DeepEqual(got, call) {
		t.Fatalf("a refused update changed the call:\n%v\n%v", got, call)
	}
	// The same analysis again is no new analysis: analyzed_at stays.
	r = e.do("PUT", "/api/v1/calls/"+id, tok, map[string]any{"analysis": call["analysis"]})
	expect(t, r, 200)
	if r.Data()["analyzed_at"] != call["analyzed_at"] {
		t.Errorf("analyzed_at moved: %v → %v", call["analyzed_at"], r.Data()["analyzed_at"])
	}
	// A call without analysis has none of its members.
	r = e.do("POST", "/api/v1/calls", tok, map[string]any{"agent_id": e.agent, "direction": "web"})
	expect(t, r, 201)
	for _, k := range []string{"analysis", "analysis_source", "analyzed_at", "analysis_error", "usage", "cost"} {
		if v, ok := r.Data()[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
}

// TestPriceTableAndCost: the price table is owners' and admins' (a developer is 403,
// even to read), a negative price is 422 naming it and changes nothing, If-Match holds;
// a call's usage is priced under it, exactly, and the call analytics sum the cost per
// currency, day and version.
func TestPriceTableAndCost(t *testing.T) {
	e := newAnalysisEnv(t)
	tok := e.Owner.Token
	r := e.do("GET", "/api/v1/price-table", tok, nil)
	expect(t, r, 200)
	if d := r.Data(); d["currency"] != "USD" || len(d["prices"].([]any)) != 0 || d["updated_at"] != nil {
		t.Fatalf("default table: %v", d)
	}
	etag := r.Header.Get("ETag")
	dev := e.addMember(e.newUser("dev@example.com", false), "developer", nil, nil)
	expect(t, e.do("GET", "/api/v1/price-table", dev, nil), 403)
	expect(t, e.do("PUT", "/api/v1/price-table", dev, map[string]any{"currency": "USD", "prices": []any{}}), 403)

	table := map[string]any{"currency": "USD", "prices": []any{
		map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "unit": "llm_input_1m_tokens", "price": "0.59"},
		map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "unit": "llm_output_1m_tokens", "price": "0.79"},
		map[string]any{"provider": "twilio", "model": "*", "unit": "telephony_minute", "price": "0.014"},
	}}
	bad := map[string]any{"currency": "USD", "prices": []any{map[string]any{"provider": "groq", "model": "*", "unit": "stt_minute", "price": "-0.01"}}}
	r = e.do("PUT", "/api/v1/price-table", tok, bad)
	expect(t, r, 422)
	expectFields(t, r, "prices.0.price")
	expect(t, e.do("PUT", "/api/v1/price-table", tok, table, "If-Match", `"stale"`), 412)
	r = e.do("PUT", "/api/v1/price-table", tok, table, "If-Match", etag)
	expect(t, r, 200)
	if path(r.Data(), "prices.2.price") != "0.014" || r.Data()["updated_at"] == nil {
		t.Fatalf("set table: %v", r.Data())
	}

	usage := map[string]any{
		"llm":       []any{map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "input_tokens": 12345, "output_tokens": 678}},
		"telephony": []any{map[string]any{"provider": "twilio", "seconds": 65.25}},
		"tts":       []any{map[string]any{"provider": "elevenlabs", "model": "eleven_flash_v2_5", "characters": 900}},
	}
	body := e.callBody(map[string]any{"outcome": "booked"})
	body["usage"] = usage
	r = e.do("POST", "/api/v1/calls", tok, body)
	expect(t, r, 201)
	call := r.Data()
	// 12,345 × 0.59 / 1M = 7,283.55 µ → 7,284; 678 × 0.79 / 1M = 535.62 µ → 536;
	// 65,250 ms × 0.014 / 60,000 ms = 15,225 µ; tts has no price.
	if path(call, "cost.total_micros") != 23045.0 || path(call, "cost.total") != "0.023045" || path(call, "cost.currency") != "USD" ||
		path(call, "cost.unpriced.0.kind") != "tts" || len(path(call, "cost.lines").([]any)) != 3 {
		t.Fatalf("cost = %v", call["cost"])
	}
	r = e.do("PUT", "/api/v1/calls/"+call["id"].(string), tok, map[string]any{"usage": map[string]any{"analysis": []any{}}})
	expect(t, r, 422)
	expectFields(t, r, "usage.analysis")
	q := url.Values{"interval": {"day"}, "agent_id": {e.agent}}
	r = e.do("GET", "/api/v1/analytics/calls?"+q.Encode(), tok, nil)
	expect(t, r, 200)
	d := r.Data()
	if path(d, "totals.cost_micros.USD") != 23045.0 || path(d, "versions.0.agent_version") != 1.0 || path(d, "versions.0.cost_micros.USD") != 23045.0 {
		t.Fatalf("analytics: totals %v, versions %v", d["totals"], d["versions"])
	}
	series := d["series"].([]any)
	if path(series[len(series)-1], "cost_micros.USD") != 23045.0 {
		t.Errorf("today's cost: %v", series[len(series)-1])
	}
	// Emptied usage takes the cost back out of the figures.
	expect(t, e.do("PUT", "/api/v1/calls/"+call["id"].(string), tok, map[string]any{"usage": nil}), 200)
	r = e.do("GET", "/api/v1/analytics/calls?"+q.Encode(), tok, nil)
	if c, _ := path(r.Data(), "totals.cost_micros").(map[string]any); len(c) != 0 {
		t.Errorf("cost after the usage went: %v", c)
	}
}

// TestAnalysisFigures: GET /api/v1/analytics/analysis counts per value, describes
// numbers, gives the success rate per day and the figures per version, and keeps to the
// caller's agents.
func TestAnalysisFigures(t *testing.T) {
	e := newAnalysisEnv(t)
	tok := e.Owner.Token
	for _, a := range []map[string]any{
		{"outcome": "booked", "party_size": 2, "call_successful": true},
		{"outcome": "booked", "party_size": 4, "call_successful": true},
		{"outcome": "declined", "party_size": 6, "call_successful": false},
		{"outcome": "callback"},
	} {
		expect(t, e.do("POST", "/api/v1/calls", tok, e.callBody(a)), 201)
	}
	get := func(q url.Values) *response {
		q.Set("agent_id", e.agent)
		return e.do("GET", "/api/v1/analytics/analysis?"+q.Encode(), tok, nil)
	}
	r := get(url.Values{"field": {"outcome"}})
	expect(t, r, 200)
	d := r.Data()
	if d["type"] != "enum" || d["count"] != 4.0 || !reflect.DeepEqual(d["values"], map[string]any{"booked": 2.0, "declined": 1.0, "callback": 1.0}) || d["number"] != nil {
		t.Fatalf("outcome: %v", d)
	}
	if path(d, "success.judged") != 3.0 || path(d, "success.successful") != 2.0 || path(d, "success.rate") != 2.0/3 || len(d["series"].([]any)) != 31 {
		t.Errorf("success %v, %d buckets", d["success"], len(d["series"].([]any)))
	}
	if path(d, "versions.0.agent_version") != 1.0 || path(d, "versions.0.count") != 4.0 || path(d, "versions.0.rate") != 2.0/3 {
		t.Errorf("versions: %v", d["versions"])
	}
	r = get(url.Values{"field": {"party_size"}, "agent_version": {"1"}})
	expect(t, r, 200)
	if n := r.Data()["number"].(map[string]any); n["count"] != 3.0 || n["mean"] != 4.0 || n["p50"].(float64) < 3.96 || n["p50"].(float64) > 4.04 || n["p90"].(float64) < 5.94 || n["p90"].(float64) > 6.06 {
		t.Errorf("party_size: %v", n)
	}
	r = get(url.Values{"field": {"wants_newsletter"}})
	expect(t, r, 200)
	if !reflect.DeepEqual(r.Data()["values"], map[string]any{"true": 0.0, "false": 0.0}) {
		t.Errorf("a boolean nobody answered: %v", r.Data()["values"])
	}
	for _, c := range []struct {
		q      url.Values
		status int
		field  string
		says   string // what the field's message tells a caller to do
	}{
		{url.Values{}, 422, "field", "call_successful"},
		{url.Values{"field": {"nope"}}, 422, "field", "Its fields: outcome, party_size, wants_newsletter, visit_date, notes."},
		{url.Values{"field": {"outcome"}, "agent_version": {"0"}}, 422, "agent_version", ""},
		{url.Values{"field": {"outcome"}, "agent_version": {"9"}}, 422, "agent_version", ""},
		{url.Values{"field": {"outcome"}, "from": {"2026-01-02T00:00:00Z"}, "to": {"2026-01-01T00:00:00Z"}}, 422, "to", ""},
	} {
		r := get(c.q)
		expect(t, r, c.status)
		if c.field != "" {
			expectFields(t, r, c.field)
		}
		if msg := fmt.Sprint(r.FieldErrors()[c.field]); !strings.Contains(msg, c.says) {
			t.Errorf("%v: %s's message %q lacks %q", c.q, c.field, msg, c.says)
		}
	}
	// A query parameter is named as one, as field's is.
	r = e.do("GET", "/api/v1/analytics/analysis?field=outcome", tok, nil)
	expect(t, r, 422)
	if msg := fmt.Sprint(r.FieldErrors()["agent_id"]); msg != "[The agent_id parameter is required.]" {
		t.Errorf("agent_id left out is told %s", msg)
	}
	other := e.createAgent(tok, map[string]any{"name": "Other"})
	limited := e.addMember(e.newUser("limited@example.com", false), "member", nil, []string{other["id"].(string)})
	expect(t, e.do("GET", "/api/v1/analytics/analysis?field=outcome&agent_id="+e.agent, limited, nil), 404)
}

// TestCallExportAnalysisColumns: a CSV export adds cost and one analysis.<name> column
// per declared field, after the stable columns.
func TestCallExportAnalysisColumns(t *testing.T) {
	e := newAnalysisEnv(t)
	body := e.callBody(map[string]any{"outcome": "booked", "party_size": 4, "wants_newsletter": false, "notes": "window, please"})
	body["usage"] = map[string]any{"llm": []any{map[string]any{"provider": "groq", "model": "m", "input_tokens": 10}}}
	expect(t, e.do("POST", "/api/v1/calls", e.Owner.Token, body), 201)
	r := e.do("GET", "/api/v1/calls/export?format=csv&agent_id="+e.agent, e.Owner.Token, nil)
	expect(t, r, 200)
	rows, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("csv: %v, %d rows", err, len(rows))
	}
	header, row := rows[0], rows[1]
	want := []string{"analysis_source", "analyzed_at", "cost", "cost_currency", "analysis.outcome", "analysis.party_size",
		"analysis.wants_newsletter", "analysis.visit_date", "analysis.notes", "analysis.call_successful", "analysis.summary"}
	if got := header[len(header)-len(want):]; !reflect.DeepEqual(got, want) {
		t.Fatalf("header ends %v, want %v", got, want)
	}
	cell := func(name string) string {
		for i, h := range header {
			if h == name {
				return row[i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	for name, want := range map[string]string{"analysis_source": "runtime", "cost": "0", "cost_currency": "USD", "analysis.outcome": "booked",
		"analysis.party_size": "4", "analysis.wants_newsletter": "false", "analysis.notes": "window, please", "analysis.visit_date": ""} {
		if got := cell(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if !strings.HasSuffix(cell("analyzed_at"), "Z") {
		t.Errorf("analyzed_at = %q", cell("analyzed_at"))
	}
}

// TestAnalysisRoutes: analyze and backfill answer 202 with a job that GET /jobs shows;
// bad bodies are 422 naming the field, an agent or call out of reach 404, a
// configuration that asks for nothing 422.
func TestAnalysisRoutes(t *testing.T) {
	e := newAnalysisEnv(t)
	tok := e.Owner.Token
	call := e.do("POST", "/api/v1/calls", tok, e.callBody(map[string]any{"outcome": "booked"})).Data()
	r := e.do("POST", "/api/v1/calls/"+call["id"].(string)+"/analyze", tok, nil)
	expect(t, r, 202)
	job := r.Data()
	if job["kind"] != "analysis.call" || job["status"] != "queued" || job["agent_id"] != e.agent {
		t.Fatalf("job = %v", job)
	}
	again := e.do("POST", "/api/v1/calls/"+call["id"].(string)+"/analyze", tok, nil)
	expect(t, again, 202)
	if again.Data()["id"] != job["id"] {
		t.Errorf("a second analyze of a call with one pending made another job")
	}
	expect(t, e.do("GET", "/api/v1/jobs/"+job["id"].(string), tok, nil), 200)
	expect(t, e.do("POST", "/api/v1/calls/call_01JD6AAAAAAAAAAAAAAAAAAAAA/analyze", tok, nil), 404)

	now := time.Now().UTC()
	rangeBody := map[string]any{"from": now.Add(-time.Hour).Format(time.RFC3339), "to": now.Add(time.Hour).Format(time.RFC3339)}
	r = e.do("POST", "/api/v1/agents/"+e.agent+"/analysis/backfill", tok, rangeBody)
	expect(t, r, 202)
	if r.Data()["kind"] != "analysis.backfill" {
		t.Fatalf("backfill job = %v", r.Data())
	}
	for _, c := range []struct {
		body   map[string]any
		faults []string
	}{
		{map[string]any{}, []string{"from", "to"}},
		{map[string]any{"from": rangeBody["to"], "to": rangeBody["from"]}, []string{"to"}},
		{map[string]any{"from": rangeBody["from"], "to": rangeBody["to"], "agent_version": 0}, []string{"agent_version"}},
		{map[string]any{"from": "yesterday", "to": rangeBody["to"]}, []string{"from"}},
		// In UTC the year 10000, which RFC 3339 cannot write; and year 0000.
		{map[string]any{"from": rangeBody["from"], "to": "9999-12-31T23:00:00-05:00"}, []string{"to"}},
		{map[string]any{"from": "0000-06-01T00:00:00Z", "to": rangeBody["to"]}, []string{"from"}},
	} {
		r := e.do("POST", "/api/v1/agents/"+e.agent+"/analysis/backfill", tok, c.body)
		expect(t, r, 422)
		expectFields(t, r, c.faults...)
	}
	expect(t, e.do("POST", "/api/v1/agents/agt_01JD6AAAAAAAAAAAAAAAAAAAAA/analysis/backfill", tok, rangeBody), 404)
	plain := e.createAgent(tok, map[string]any{"name": "Plain"})
	r = e.do("POST", "/api/v1/agents/"+plain["id"].(string)+"/analysis/backfill", tok, rangeBody)
	expect(t, r, 422)
	expectFields(t, r, "agent_version")
	if msg := fmt.Sprint(r.FieldErrors()["agent_version"]); !strings.Contains(msg, "PUT /api/v1/agents/"+plain["id"].(string)) {
		t.Errorf("the backfill's refusal does not say what to do: %q", msg)
	}
	// A call of a version that asks for nothing: the refusal names the way to analyze it.
	plainCall := e.do("POST", "/api/v1/calls", tok, map[string]any{"agent_id": plain["id"], "direction": "web", "status": "ended"}).Data()
	r = e.do("POST", "/api/v1/calls/"+plainCall["id"].(string)+"/analyze", tok, nil)
	expect(t, r, 422)
	expectFields(t, r, "call_id")
	if msg := fmt.Sprint(r.FieldErrors()["call_id"]); !strings.Contains(msg, "PUT /api/v1/agents/"+plain["id"].(string)) || !strings.Contains(msg, "/analysis/backfill") {
		t.Errorf("the analyze refusal does not say what to do: %q", msg)
	}
	member := e.addMember(e.newUser("member@example.com", false), "member", nil, nil)
	expect(t, e.do("POST", "/api/v1/calls/"+call["id"].(string)+"/analyze", member, nil), 403)
}

// TestOneBackfillAtATime: each backfill asks the model once per call of its range, so a
// member posting backfills of the same agent again and again would spend the model's
// budget as many times over; a second one while the first is pending is 409 conflict and
// queues nothing, while another agent's backfill is not held up.
func TestOneBackfillAtATime(t *testing.T) {
	e := newAnalysisEnv(t)
	tok := e.Owner.Token
	now := time.Now().UTC()
	rangeBody := map[string]any{"from": now.Add(-time.Hour).Format(time.RFC3339), "to": now.Add(time.Hour).Format(time.RFC3339)}
	first := e.do("POST", "/api/v1/agents/"+e.agent+"/analysis/backfill", tok, rangeBody)
	expect(t, first, 202)
	id := first.Data()["id"].(string)
	jobs := func() int {
		r := e.do("GET", "/api/v1/jobs?kind=analysis.backfill&per_page=100", tok, nil)
		expect(t, r, 200)
		return len(r.List())
	}
	for _, body := range []map[string]any{rangeBody, {"from": now.Add(-48 * time.Hour).Format(time.RFC3339), "to": rangeBody["to"]}} {
		r := e.do("POST", "/api/v1/agents/"+e.agent+"/analysis/backfill", tok, body)
		expect(t, r, 409)
		if code := r.JSON()["code"]; code != "conflict" || !strings.Contains(string(r.Body), id) {
			t.Errorf("the refusal = %s, want code conflict naming %s", r.Body, id)
		}
	}
	if n := jobs(); n != 1 {
		t.Fatalf("%d backfill jobs after the refusals, want 1", n)
	}
	other := e.createAgent(tok, map[string]any{"name": "Other", "analysis_config": analysisGroup()})
	expect(t, e.do("POST", "/api/v1/agents/"+other["id"].(string)+"/analysis/backfill", tok, rangeBody), 202)
}
