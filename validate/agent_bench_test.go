package validate_test

import (
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/fakeagents"
	"github.com/voiceapi/voiceapi/strictjson"
	"github.com/voiceapi/voiceapi/validate"
)

var catalog = func() *data.Catalog {
	cat, err := data.LoadCatalog("")
	if err != nil {
		panic(err)
	}
	return cat
}()

// applyBody is what a create or an update does with a body before storage: decode it
// strictly into a data.AgentUpdate, merge it into base, and check the result; the faults
// come back as one error.
func applyBody(base *data.Agent, body []byte, creating bool) (*data.Agent, error) {
	var in data.AgentUpdate
	decodeErr := strictjson.Decode(body, &in)
	if decodeErr != nil && data.ErrorCode(decodeErr) != data.EINVALID {
		return nil, decodeErr
	}
	a := in.Apply(base)
	return a, validate.Combine(decodeErr, validate.AgentChange(a, &in, creating, catalog).Err())
}

func mustBody(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestFullAgentBodyIsValid(t *testing.T) {
	a, err := applyBody(data.DefaultAgent(), mustBody(t, fakeagents.Body("Support line", 20)), true)
	if err != nil {
		t.Fatalf("full body rejected: %v", err.(*data.Error).Fields)
	}
	if len(a.LLMConfig.Tools) != 20 || a.TTSConfig.Provider != data.TTSCartesia || a.CallConfig.RingDurationMS != 20_000 {
		t.Fatalf("body not applied: %d tools, tts %s, ring %d", len(a.LLMConfig.Tools), a.TTSConfig.Provider, a.CallConfig.RingDurationMS)
	}
}

// BenchmarkApplyAgentBody decodes, merges and validates a full agent with 20 tools from
// its bytes, as a create does (target: under 50 µs/op).
func BenchmarkApplyAgentBody(b *testing.B) {
	body := mustBody(b, fakeagents.Body("Support line", 20))
	base := data.DefaultAgent()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := applyBody(base, body, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalAgentBody decodes the same body with plain encoding/json into `any`:
// no rules, no strictness. On a shared machine, whose speed varies from run to run, the
// ratio of BenchmarkApplyAgentBody to it is the steadier figure.
func BenchmarkUnmarshalAgentBody(b *testing.B) {
	raw, err := json.Marshal(fakeagents.Body("Support line", 20))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			b.Fatal(err)
		}
	}
}
