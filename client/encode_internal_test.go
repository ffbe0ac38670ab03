package client

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// TestEncodeBodySendsWhatIsSet: the server's strict decoder reads an absent member as
// "not given" and refuses null where a member is not nullable, so the encoding matters.
func TestEncodeBodySendsWhatIsSet(t *testing.T) {
	agent := "agt_1"
	cases := []struct {
		name string
		in   any
		want string
	}{
		{"unset Opt left out", data.NumberUpdate{Nickname: data.Some("desk")}, `{"nickname":"desk"}`},
		{"set nil Opt is null", data.NumberUpdate{InboundAgentID: data.Some[*string](nil)}, `{"inbound_agent_id":null}`},
		{"set Opt pointer", data.NumberUpdate{OutboundAgentID: data.Some(&agent)}, `{"outbound_agent_id":"agt_1"}`},
		{"nothing set", data.WebhookUpdate{}, `{}`},
		{"set empty list", data.WebhookUpdate{Events: data.Some([]string{})}, `{"events":[]}`},
		{"nil slice left out", data.KnowledgeBaseCreate{Name: "K"}, `{"name":"K"}`},
		{"nullable nil pointer is null", data.NumberCreate{PhoneNumber: "+1"}, `{"phone_number":"+1","nickname":"","provider":"","inbound_agent_id":null,"outbound_agent_id":null}`},
		{"nonnull nil pointer left out", data.KnowledgeQuery{Query: "q"}, `{"query":"q","similarity_threshold":null}`},
		{"a Marshaler is itself", AgentInput{Name: &agent}, `{"name":"agt_1"}`},
		{"not a struct", map[string]int{"a": 1}, `{"a":1}`},
	}
	for _, tc := range cases {
		got, err := encodeBody(tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
	if _, err := encodeBody(AgentInput{CallConfig: &data.CallConfig{}, Patch: map[string]map[string]any{"call_config": {}}}); err == nil {
		t.Error("a group both typed and in Patch is accepted")
	}
}

func TestRetryDelay(t *testing.T) {
	c := &Client{retry: RetryPolicy{MaxAttempts: 4, BaseDelay: 100 * time.Millisecond, MaxDelay: 300 * time.Millisecond, MaxRetryAfter: 10 * time.Second}}
	e := func(status int, after time.Duration) error { return &Error{StatusCode: status, RetryAfter: after} }
	cases := []struct {
		name      string
		err       error
		attempt   int
		retriable bool
		again     bool
		max       time.Duration
		exact     time.Duration
	}{
		{"503 backs off within the first ceiling", e(503, 0), 1, true, true, 100 * time.Millisecond, -1},
		{"the ceiling doubles", e(500, 0), 2, true, true, 200 * time.Millisecond, -1},
		{"the ceiling stops at MaxDelay", e(502, 0), 3, true, true, 300 * time.Millisecond, -1},
		{"the last attempt is not retried", e(503, 0), 4, true, false, 0, -1},
		{"Retry-After is honoured exactly", e(429, 7*time.Second), 1, true, true, 0, 7 * time.Second},
		{"a Retry-After past the limit ends retries", e(429, 11*time.Second), 1, true, false, 0, -1},
		{"a 4xx is not retried", e(409, 0), 1, true, false, 0, -1},
		{"a POST without a key is not retried", e(503, 0), 1, false, false, 0, -1},
		{"a transport error is retried", errors.New("connection reset"), 1, true, true, 100 * time.Millisecond, -1},
		{"a download cut midway is not", fmt.Errorf("x: %w: %w", errPartialBody, errors.New("reset")), 1, true, false, 0, -1},
	}
	for _, tc := range cases {
		for range 20 { // the jitter is random: every draw must hold
			d, again := c.retryDelay(tc.err, tc.attempt, tc.retriable)
			if again != tc.again || (tc.exact >= 0 && d != tc.exact) || (tc.exact < 0 && again && (d < 0 || d > tc.max)) {
				t.Fatalf("%s: %v, %v", tc.name, d, again)
			}
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"": 0, "5": 5 * time.Second, "-1": 0, "soon": 0, "+5": 0, "0": 0, "007": 7 * time.Second,
		// The longest count of seconds a Duration holds, and one past it: the longest
		// Duration, not a product wrapped to a negative or to 290ms.
		"9223372036": 9223372036 * time.Second, "9223372037": math.MaxInt64, "18446744074": math.MaxInt64, "20000000000000000000A": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}
