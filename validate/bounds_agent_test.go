package validate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
)

// floatStep is "just past" a bound of a decimal field: the API's values have two decimals.
const floatStep = 0.01

// agentErr applies an update body to the agent base makes, as PUT /agents/{id} does.
func agentErr(base func() *data.Agent, body string) error {
	obj, err := strictjson.Object([]byte(body))
	if err != nil {
		return err
	}
	_, errs := applyAgentBody(base(), obj, false, testCatalog)
	return errs.Err()
}

// jsonString is s as a JSON string.
func jsonString(s string) string { return mustJSON(s) }

// intBounds are the cases of an integer range at both ends: body makes the body holding n.
func intBounds(name, path string, min, max int, base func() *data.Agent, body func(n int) string) []bound {
	return []bound{
		{name + " min", path, func(past bool) error { return agentErr(base, body(downTo(min, past))) }},
		{name + " max", path, func(past bool) error { return agentErr(base, body(upTo(max, past))) }},
	}
}

// floatBounds are the cases of a decimal range at both ends, floatStep past each.
func floatBounds(name, path string, min, max float64, base func() *data.Agent, body func(v float64) string) []bound {
	at := func(v, step float64, past bool) float64 {
		if past {
			return v + step
		}
		return v
	}
	return []bound{
		{name + " min", path, func(past bool) error { return agentErr(base, body(at(min, -floatStep, past))) }},
		{name + " max", path, func(past bool) error { return agentErr(base, body(at(max, floatStep, past))) }},
	}
}

func TestAgentGroupBounds(t *testing.T) {
	var cases []bound
	cases = append(cases, intBounds("MaxCallDurationMS", "call_config.max_call_duration_ms", MinMaxCallDurationMS, MaxMaxCallDurationMS, stored,
		func(n int) string { return fmt.Sprintf(`{"call_config":{"max_call_duration_ms":%d}}`, n) })...)
	cases = append(cases, intBounds("RingDurationMS", "call_config.ring_duration_ms", MinRingDurationMS, MaxRingDurationMS, stored,
		func(n int) string { return fmt.Sprintf(`{"call_config":{"ring_duration_ms":%d}}`, n) })...)
	cases = append(cases, intBounds("ChunksToRetrieve", "knowledge_base_config.chunks_to_retrieve", MinChunksToRetrieve, MaxChunksToRetrieve, stored,
		func(n int) string { return fmt.Sprintf(`{"knowledge_base_config":{"chunks_to_retrieve":%d}}`, n) })...)
	cases = append(cases, floatBounds("Similarity", "knowledge_base_config.similarity_threshold", MinSimilarity, MaxSimilarity, stored,
		func(v float64) string { return fmt.Sprintf(`{"knowledge_base_config":{"similarity_threshold":%v}}`, v) })...)
	cases = append(cases, floatBounds("AISpeakWaitTime", "prompt_config.ai_speak_wait_time", MinAISpeakWaitTime, MaxAISpeakWaitTime, stored,
		func(v float64) string { return fmt.Sprintf(`{"prompt_config":{"ai_speak_wait_time":%v}}`, v) })...)
	cases = append(cases, floatBounds("Temperature", "llm_config.temperature", MinTemperature, MaxTemperature, stored,
		func(v float64) string { return fmt.Sprintf(`{"llm_config":{"temperature":%v}}`, v) })...)
	for _, prov := range []string{data.TTSElevenLabs, data.TTSRime} {
		cases = append(cases, intBounds("StreamingLatency "+prov, "tts_config.streaming_latency", MinStreamingLatency, MaxStreamingLatency, withTTS(prov),
			func(n int) string { return fmt.Sprintf(`{"tts_config":{"streaming_latency":%d}}`, n) })...)
	}
	cases = append(cases, floatBounds("SpeedAlpha", "tts_config.speed_alpha", MinSpeedAlpha, MaxSpeedAlpha, withTTS(data.TTSRime),
		func(v float64) string { return fmt.Sprintf(`{"tts_config":{"speed_alpha":%v}}`, v) })...)
	cases = append(cases, intBounds("ConcurrentCalls", "max_concurrent_calls", 1, MaxConcurrentCalls, stored,
		func(n int) string { return fmt.Sprintf(`{"max_concurrent_calls":%d}`, n) })...)
	cases = append(cases,
		bound{"MaxAgentName", "name", func(past bool) error {
			return agentErr(stored, `{"name":`+jsonString(chars(upTo(MaxAgentName, past)))+`}`)
		}},
		bound{"MaxPrompt", "prompt_config.prompt", func(past bool) error {
			return agentErr(stored, `{"prompt_config":{"prompt":`+jsonString(chars(upTo(MaxPrompt, past)))+`}}`)
		}},
		bound{"MaxText welcome_message", "prompt_config.welcome_message", func(past bool) error {
			return agentErr(stored, `{"prompt_config":{"welcome_message":`+jsonString(chars(upTo(MaxText, past)))+`}}`)
		}},
		bound{"MaxPublishDescription", "description", func(past bool) error {
			d := chars(upTo(MaxPublishDescription, past))
			return errsOf(func(errs *Errors) { ValidatePublish(&d, errs) })
		}},
	)
	checkBounds(t, cases)
}

func TestToolBounds(t *testing.T) {
	const p = "llm_config.tools.0."
	e := data.ToolEndCall
	cases := []bound{
		// A tool's name is a variable name, ASCII only: characters and bytes agree.
		{"MaxToolName", p + "name", func(past bool) error {
			return agentErr(stored, tool(e, `"name":"`+strings.Repeat("a", upTo(MaxToolName, past))+`"`))
		}},
		{"MaxToolDescription", p + "description", func(past bool) error {
			return agentErr(stored, tool(e, `"description":`+jsonString(chars(upTo(MaxToolDescription, past)))))
		}},
		{"MaxHoldAudio", p + "hold_audio", func(past bool) error {
			return agentErr(stored, tool(e, `"hold_audio":`+jsonString(chars(upTo(MaxHoldAudio, past)))))
		}},
		{"MaxText announcement_message", p + "announcement_message", func(past bool) error {
			return agentErr(stored, tool(e, `"announcement_message":`+jsonString(chars(upTo(MaxText, past)))))
		}},
	}
	cases = append(cases, intBounds("PauseDetectionMS", p+"pause_detection_delay_ms", MinPauseDetectionMS, MaxPauseDetectionMS, stored,
		func(n int) string { return tool(e, fmt.Sprintf(`"pause_detection_delay_ms":%d`, n)) })...)
	checkBounds(t, cases)
}
