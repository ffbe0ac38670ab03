package server_test

import (
	"bytes"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
)

// scrape fetches /metrics with token and parses it with Prometheus's own text parser.
func scrape(t *testing.T, e *env, token string) map[string]*dto.MetricFamily {
	t.Helper()
	r := e.do("GET", "/metrics", token, nil)
	expect(t, r, 200)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type = %q, want the text exposition", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, r.Body)
	}
	return families
}

// sample returns the metric of family name whose labels include want, or nil.
func sample(families map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := families[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

func TestMetricsExposition(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 3; i++ {
		expect(t, e.do("GET", "/api/v1/user", e.Owner.Token, nil), 200)
	}
	expect(t, e.do("GET", "/api/v1/workspaces/ws_nope", e.Owner.Token, nil), 404)
	expect(t, e.do("BREW", "/api/v1/user", e.Owner.Token, nil), 405)

	families := scrape(t, e, e.Owner.Token)

	m := sample(families, "voiceapi_http_requests_total", map[string]string{"method": "GET", "route": "/api/v1/user", "status": "200"})
	if m == nil || m.GetCounter().GetValue() != 3 {
		t.Fatalf("GET /api/v1/user 200 counter = %v, want 3", m)
	}
	// The route label is the template, never the raw path: ids do not make new series.
	if sample(families, "voiceapi_http_requests_total", map[string]string{"route": "/api/v1/workspaces/{workspace_id}", "status": "404"}) == nil {
		t.Error("no series for the workspace route template's 404")
	}
	// A made-up method is folded into OTHER, so clients cannot grow the series set.
	if sample(families, "voiceapi_http_requests_total", map[string]string{"method": "BREW"}) != nil ||
		sample(families, "voiceapi_http_requests_total", map[string]string{"method": "OTHER", "status": "405"}) == nil {
		t.Error("the unknown method was not folded into OTHER")
	}
	h := sample(families, "voiceapi_http_request_duration_seconds", map[string]string{"method": "GET", "route": "/api/v1/user"})
	if h == nil || h.GetHistogram().GetSampleCount() != 3 || len(h.GetHistogram().GetBucket()) == 0 {
		t.Errorf("latency histogram for GET /api/v1/user = %v, want 3 samples in buckets", h)
	}
	if !testkit.OnPostgres() { // the bbolt file's figures
		if g := sample(families, "voiceapi_db_size_bytes", nil); g == nil || g.GetGauge().GetValue() <= 0 {
			t.Errorf("voiceapi_db_size_bytes = %v, want the file's size", g)
		}
		if g := sample(families, "voiceapi_db_open_read_transactions", nil); g == nil {
			t.Error("no voiceapi_db_open_read_transactions")
		}
		if c := sample(families, "voiceapi_db_read_transactions_total", nil); c == nil || c.GetCounter().GetValue() < 1 {
			t.Errorf("voiceapi_db_read_transactions_total = %v", c)
		}
	}
	if g := sample(families, "voiceapi_webhook_queue_depth", nil); g == nil || g.GetGauge().GetValue() != 0 {
		t.Errorf("voiceapi_webhook_queue_depth = %v, want 0 with no dispatcher", g)
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if families[name] == nil {
			t.Errorf("runtime/process collector metric %s missing", name)
		}
	}

	// The scrape itself is counted by the next one.
	families = scrape(t, e, e.Owner.Token)
	if sample(families, "voiceapi_http_requests_total", map[string]string{"route": "/metrics", "status": "200"}) == nil {
		t.Error("the first scrape was not counted")
	}
}

func TestMetricsNeedsAnInstanceAdmin(t *testing.T) {
	e := newEnv(t)
	expect(t, e.do("GET", "/metrics", "", nil), 401)
	user := e.newUser("user@example.com", false)
	expect(t, e.do("GET", "/metrics", user.Token, nil), 403)
}

func TestMetricsQueueDepthFromConfig(t *testing.T) {
	e := newEnvWith(t, nil, func(c *server.Config) { c.QueueDepth = func() int { return 7 } })
	if g := sample(scrape(t, e, e.Owner.Token), "voiceapi_webhook_queue_depth", nil); g == nil || g.GetGauge().GetValue() != 7 {
		t.Errorf("voiceapi_webhook_queue_depth = %v, want 7 from Config.QueueDepth", g)
	}
}
