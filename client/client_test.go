package client_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/webhook"
)

func TestErrorsAreTyped(t *testing.T) {
	s := newServer(t, nil)
	c := s.client(t)
	ctx := context.Background()

	_, _, err := c.Agents.Get(ctx, "agt_missing")
	e := mustErr(t, err, http.StatusNotFound)
	if e.Code != data.ENOTFOUND || e.Message == "" || e.RequestID == "" {
		t.Errorf("not found: %+v", e)
	}
	if !client.IsCode(err, data.ENOTFOUND) {
		t.Error("IsCode(not_found) is false")
	}

	_, _, err = c.Agents.Create(ctx, client.AgentInput{Patch: map[string]map[string]any{"call_config": {"ring_duration_ms": -1}}})
	e = mustErr(t, err, http.StatusUnprocessableEntity)
	if e.Code != data.EINVALID || len(e.Fields["name"]) == 0 || len(e.Fields["call_config.ring_duration_ms"]) == 0 {
		t.Errorf("validation error fields: %+v", e.Fields)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "422 validation_failed: ") || strings.Count(msg, "call_config.ring_duration_ms") != 1 {
		t.Errorf("Error() should name each field once: %s", msg)
	}

	bad, _ := client.New(s.URL, client.WithToken("1|wrong"))
	_, _, err = bad.Users.Me(ctx)
	mustErr(t, err, http.StatusUnauthorized)

	if _, err := client.New("localhost:8080"); err == nil {
		t.Error("a server URL without a scheme is accepted")
	}
}

// TestIfMatch: a write with a stale ETag is a 412 and changes nothing.
func TestIfMatch(t *testing.T) {
	s := newServer(t, nil)
	c := s.client(t)
	ctx := context.Background()
	a, etag, err := c.Agents.Create(ctx, client.AgentInput{Name: ptr("One")})
	if err != nil {
		t.Fatal(err)
	}
	if etag == "" || !strings.HasPrefix(etag, `"`) {
		t.Fatalf("create returned ETag %q", etag)
	}
	_, etag2, err := c.Agents.Get(ctx, a.ID)
	if err != nil || etag2 != etag {
		t.Fatalf("GET ETag %q, create ETag %q (%v)", etag2, etag, err)
	}
	if _, _, err := c.Agents.Update(ctx, a.ID, client.AgentInput{Name: ptr("Two")}, client.IfMatch(etag)); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Agents.Update(ctx, a.ID, client.AgentInput{Name: ptr("Three")}, client.IfMatch(etag))
	if e := mustErr(t, err, http.StatusPreconditionFailed); e.Code != data.EPRECONDITION {
		t.Errorf("stale If-Match: %+v", e)
	}
	err = c.Agents.Delete(ctx, a.ID, client.IfMatch(etag))
	mustErr(t, err, http.StatusPreconditionFailed)
	got, _, _ := c.Agents.Get(ctx, a.ID)
	if got.Name != "Two" {
		t.Errorf("a refused write changed the agent: %q", got.Name)
	}
}

// TestAllFollowsCursors: the iterator walks every page, and breaking out stops fetching.
func TestAllFollowsCursors(t *testing.T) {
	s := newServer(t, nil)
	c := s.client(t, client.WithPageSize(2))
	ctx := context.Background()
	want := map[string]bool{}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		a, _, err := c.Agents.Create(ctx, client.AgentInput{Name: ptr(n)})
		if err != nil {
			t.Fatal(err)
		}
		want[a.ID] = true
	}
	before := len(s.calls.all())
	seen := map[string]bool{}
	for a, err := range c.Agents.All(ctx, client.AgentFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[a.ID] {
			t.Errorf("%s twice", a.ID)
		}
		seen[a.ID] = true
	}
	if len(seen) != 5 || len(want) != 5 {
		t.Errorf("iterated %d of 5 agents", len(seen))
	}
	if pages := len(s.calls.all()) - before; pages != 3 {
		t.Errorf("5 agents by 2 took %d requests, want 3", pages)
	}
	before = len(s.calls.all())
	for range c.Agents.All(ctx, client.AgentFilter{}) {
		break
	}
	if n := len(s.calls.all()) - before; n != 1 {
		t.Errorf("breaking after the first item made %d requests", n)
	}
	for _, err := range c.Agents.All(ctx, client.AgentFilter{Status: "bogus"}) {
		mustErr(t, err, http.StatusUnprocessableEntity)
	}
}

// TestIdempotencyKey: a repeated create with the same key gives the first record.
func TestIdempotencyKey(t *testing.T) {
	s := newServer(t, nil)
	c := s.client(t)
	ctx := context.Background()
	in := data.WebhookCreate{URL: "https://example.com/a", Events: []string{"*"}}
	first, err := c.Webhooks.Create(ctx, in, client.WithIdempotencyKey("k-1"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Webhooks.Create(ctx, in, client.WithIdempotencyKey("k-1"))
	if err != nil {
		t.Fatal(err)
	}
	if again.Webhook.ID != first.Webhook.ID || again.Secret != first.Secret {
		t.Errorf("a repeat with the same key created %s after %s", again.Webhook.ID, first.Webhook.ID)
	}
	all, _ := client.Collect(c.Webhooks.All(ctx))
	if len(all) != 1 {
		t.Errorf("%d webhooks after two creates with one key", len(all))
	}
}

// TestRetryHonoursRetryAfter: against the server's own rate limiter, a 429 is retried
// after exactly its Retry-After (the wait moves the server's clock, not the test's).
func TestRetryHonoursRetryAfter(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := newServer(t, nil, func(c *server.Config) { c.RateLimit = 2; c.Now = clock })
	c := s.client(t)
	var waits []time.Duration
	client.SetSleep(c, func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
		return nil
	})
	ctx := context.Background()
	for i := range 3 {
		if _, _, err := c.Users.Me(ctx); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if len(waits) != 1 || waits[0] <= 0 || waits[0] > time.Minute {
		t.Fatalf("waits %v: want one wait of the server's Retry-After", waits)
	}

	// A POST without an Idempotency-Key is never retried, even on a 429.
	waits = nil
	once := s.client(t, client.WithRetryPolicy(client.RetryPolicy{MaxAttempts: 1}))
	for i := 0; ; i++ {
		if _, _, err := once.Users.Me(ctx); err != nil {
			mustErr(t, err, http.StatusTooManyRequests)
			break
		}
		if i > 3 {
			t.Fatal("the rate limit never answered 429")
		}
	}
	_, _, err := c.Agents.Create(ctx, client.AgentInput{Name: ptr("x")})
	mustErr(t, err, http.StatusTooManyRequests)
	if len(waits) != 0 {
		t.Errorf("a POST without a key was retried: %v", waits)
	}
	// With one it is.
	_, _, err = c.Agents.Create(ctx, client.AgentInput{Name: ptr("x")}, client.WithIdempotencyKey("retry-1"))
	if err != nil || len(waits) != 1 {
		t.Errorf("a POST with a key: err %v, waits %v", err, waits)
	}
}

// TestRetryOn5xx: 503s before the real server answers are retried with backoff; a 4xx is
// not retried; a POST that is not idempotent is sent once.
func TestRetryOn5xx(t *testing.T) {
	var failures atomic.Int32
	s := newServer(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if failures.Load() > 0 {
				failures.Add(-1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				w.Write([]byte(`{"message":"Busy.","code":"service_unavailable"}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	c := s.client(t, client.WithRetryPolicy(client.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 4 * time.Second}))
	var waits []time.Duration
	client.SetSleep(c, func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil })
	ctx := context.Background()

	failures.Store(2)
	if _, _, err := c.Users.Me(ctx); err != nil {
		t.Fatalf("after two 503s: %v", err)
	}
	if len(waits) != 2 || waits[0] > time.Second || waits[1] > 2*time.Second {
		t.Errorf("backoff waits %v: want two, within 1 s then 2 s", waits)
	}

	waits = nil
	failures.Store(5)
	_, _, err := c.Users.Me(ctx)
	if e := mustErr(t, err, http.StatusServiceUnavailable); e.Code != data.EUNAVAILABLE {
		t.Errorf("after the last attempt: %+v", e)
	}
	if len(waits) != 2 {
		t.Errorf("3 attempts waited %d times", len(waits))
	}

	waits = nil
	failures.Store(1)
	a, _, _ := c.Agents.Create(ctx, client.AgentInput{Name: ptr("a")}, client.WithIdempotencyKey("k"))
	if a == nil || len(waits) != 1 {
		t.Errorf("an idempotent POST after one 503: %v, waits %v", a, waits)
	}
	failures.Store(1)
	waits = nil
	err = c.Agents.Publish(ctx, a.ID, nil, client.WithIdempotencyKey("p"))
	mustErr(t, err, http.StatusServiceUnavailable)
	if len(waits) != 0 {
		t.Error("publish, whose route takes no Idempotency-Key, was retried")
	}

	failures.Store(0)
	_, _, err = c.Agents.Get(ctx, "agt_missing")
	mustErr(t, err, http.StatusNotFound)
	if len(waits) != 0 {
		t.Error("a 404 was retried")
	}
}

func TestVerifyWebhook(t *testing.T) {
	// The Standard Webhooks test vector (docs/webhooks.md).
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"test": 2432232314}`)
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	if err := client.VerifyWebhook(secret, h, body, 0); err != nil {
		t.Fatalf("test vector: %v", err)
	}
	at := time.Unix(1614265330, 0)
	if err := client.VerifyWebhookAt(secret, h, body, 5*time.Minute, at.Add(4*time.Minute)); err != nil {
		t.Errorf("within tolerance: %v", err)
	}
	if err := client.VerifyWebhookAt(secret, h, body, 5*time.Minute, at.Add(6*time.Minute)); !errors.Is(err, client.ErrWebhookSignature) {
		t.Errorf("6 minutes late: %v", err)
	}
	if err := client.VerifyWebhook(secret, h, body, 5*time.Minute); !errors.Is(err, client.ErrWebhookSignature) {
		t.Errorf("a 2021 timestamp today: %v", err)
	}
	if err := client.VerifyWebhook(secret, h, []byte(`{"test": 2432232315}`), 0); !errors.Is(err, client.ErrWebhookSignature) {
		t.Errorf("tampered body: %v", err)
	}
	if err := client.VerifyWebhook("whsec_"+strings.Repeat("A", 32), h, body, 0); !errors.Is(err, client.ErrWebhookSignature) {
		t.Errorf("wrong secret: %v", err)
	}

	// What the server signs, with several signatures in the header, verifies.
	const mine = "whsec_c2VjcmV0LXNpZ25pbmcta2V5LWZvci10ZXN0cw=="
	ts := time.Now().Unix()
	sig, err := webhook.Sign(mine, "evt_1", ts, body)
	if err != nil {
		t.Fatal(err)
	}
	h = http.Header{}
	h.Set("webhook-id", "evt_1")
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", "v1,bm90LWl0 "+sig)
	if err := client.VerifyWebhook(mine, h, body, 5*time.Minute); err != nil {
		t.Errorf("the server's signature: %v", err)
	}

	// A signed timestamp further ahead than a time.Duration reaches (292 years) is as late
	// as any other (found by FuzzVerifyWebhook: the distance saturated and passed).
	for _, far := range []int64{ts + 301, 99999999999, 1 << 40, 1<<63 - 1} {
		sig, _ := webhook.Sign(mine, "evt_1", far, body)
		h.Set("webhook-timestamp", strconv.FormatInt(far, 10))
		h.Set("webhook-signature", sig)
		if err := client.VerifyWebhook(mine, h, body, 5*time.Minute); !errors.Is(err, client.ErrWebhookSignature) {
			t.Errorf("timestamp %d: %v, want it refused", far, err)
		}
	}
}

// TestAgentTypedGroupRoundTrip: an agent read, changed in a typed group and sent back
// keeps everything else, its masked API key included.
func TestAgentTypedGroupRoundTrip(t *testing.T) {
	s := newServer(t, nil)
	c := s.client(t)
	ctx := context.Background()
	a, _, err := c.Agents.Create(ctx, client.AgentInput{Name: ptr("Typed"), Patch: map[string]map[string]any{
		"llm_config": {"provider": "mistral", "model": "mistral-large-latest", "api_key": "sk-secret-key-1234", "tools": []any{map[string]any{"name": "end", "type": "end_call"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	a, etag, err := c.Agents.Get(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	llm := a.LLMConfig
	temp := 0.9
	llm.Temperature = &temp
	got, _, err := c.Agents.Update(ctx, a.ID, client.AgentInput{LLMConfig: &llm}, client.IfMatch(etag))
	if err != nil {
		t.Fatal(err)
	}
	if *got.LLMConfig.Temperature != 0.9 || got.LLMConfig.APIKey == nil || *got.LLMConfig.APIKey != "****1234" ||
		len(got.LLMConfig.Tools) != 1 || got.LLMConfig.Model != "mistral-large-latest" || !reflect.DeepEqual(got.PromptConfig, a.PromptConfig) {
		t.Errorf("after a typed update: %+v", got.LLMConfig)
	}
}
