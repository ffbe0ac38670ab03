package server_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// A call's start whose server stopped after the call was registered and before the answer
// was kept is answered on its retry as the first request would have been: the call, the
// configuration to run (the credential in clear) and the variant, not the call's record
// alone, and never cached. One call is registered.
func TestCallStartRetryAfterACrashGetsTheWholeAnswer(t *testing.T) {
	e := newStartEnv(t)
	path, body := "/api/v1/calls/start", `{"direction":"inbound","to_number":"`+startNumber+`","from_number":"+15551230000"}`
	to, caller := startNumber, "+15551230000"
	crashedRequest(t, e.Server, e.runtime, "POST", path, body, func(ctx context.Context) error {
		_, err := e.Svc.CallStart.StartCall(ctx, data.CallStart{Direction: data.DirectionInbound, ToNumber: &to, FromNumber: &caller})
		return err
	})
	r := e.Do("POST", path, e.runtime, body, "Idempotency-Key", "k-"+path)
	testkit.Expect(t, r, 201)
	if r.Header.Get("Idempotent-Replayed") != "true" || r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("the retry's headers: %v", r.Header)
	}
	d := r.Data()
	call, _ := d["call"].(map[string]any)
	agent, _ := d["agent"].(map[string]any)
	variant, _ := d["variant"].(map[string]any)
	if call == nil || agent == nil || variant == nil {
		t.Fatalf("the retry answered %s, want {call, agent, variant}", r.Body)
	}
	if call["status"] != "registered" || agent["id"] != e.agent || variant["version"] != float64(1) {
		t.Errorf("call %v, agent %v, variant %v", call["status"], agent["id"], variant)
	}
	llm, _ := agent["llm_config"].(map[string]any)
	if llm["api_key"] != startKey {
		t.Errorf("the configuration's credential %v, want it in clear as a first answer has it", llm["api_key"])
	}
	if r.Header.Get("ETag") != "" {
		t.Errorf("a call start's answer is no one record: ETag %q", r.Header.Get("ETag"))
	}
	if n := e.callCount(); n != 1 {
		t.Errorf("%d calls, want the one the crashed request registered", n)
	}
}

// A replay of a kept call start (the first answer was written and kept) is not cached
// either, as the first answer is not.
func TestCallStartReplayIsNotCached(t *testing.T) {
	e := newStartEnv(t)
	body := map[string]any{"direction": "inbound", "to_number": startNumber}
	first := e.Do("POST", "/api/v1/calls/start", e.runtime, body, "Idempotency-Key", "start-1")
	testkit.Expect(t, first, 201)
	again := e.Do("POST", "/api/v1/calls/start", e.runtime, body, "Idempotency-Key", "start-1")
	testkit.Expect(t, again, 201)
	if again.Header.Get("Idempotent-Replayed") != "true" || again.Header.Get("Cache-Control") != "no-store" || first.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("first %v, replay %v: both no-store", first.Header, again.Header)
	}
}
