package validate

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// Complete tts_config bodies, one per provider.
var ttsExamples = map[string]string{
	data.TTSElevenLabs: `{"provider":"elevenlabs","model":"eleven_multilingual_v2","voice_id":"21m00Tcm4TlvDq8ikWAM","streaming_latency":2}`,
	data.TTSCartesia:   `{"provider":"cartesia","model":"sonic-3","voice_id":"a0e99841-438c-4a64-b679-ae501e7d6091","speed":"normal","emotion":"positivity:high"}`,
	data.TTSRime:       `{"provider":"rime","model":"arcana","speaker":"luna","streaming_latency":1,"speed_alpha":1.0}`,
}

func withTTS(provider string) func() *data.Agent {
	return func() *data.Agent {
		a, errs := applyAgentBody(stored(), mustObject(`{"tts_config":`+ttsExamples[provider]+`}`), false, testCatalog)
		if errs.Err() != nil {
			panic(errs.Err())
		}
		return a
	}
}

func tts(fields string) string { return `{"tts_config":{` + fields + `}}` }

func TestTTSConfig(t *testing.T) {
	for prov, body := range ttsExamples {
		runRules(t, stored, []ruleCase{{"example " + prov, `{"tts_config":` + body + `}`, ""}})
		for _, m := range testCatalog.Models(data.KindTTS, prov) {
			runRules(t, withTTS(prov), []ruleCase{{prov + " " + m, tts(`"model":"` + m + `"`), ""}})
		}
	}
	const p = "tts_config."
	runRules(t, stored, []ruleCase{
		{"provider unknown", tts(`"provider":"polly","model":"x"`), p + "provider"},
		{"model of another provider", tts(`"model":"sonic-3"`), p + "model"},
		{"elevenlabs voice_id null", tts(`"voice_id":null`), p + "voice_id"},
		{"elevenlabs voice_id too long", tts(`"voice_id":"` + str(MaxIdentifier+1) + `"`), p + "voice_id"},
		{"elevenlabs speaker", tts(`"speaker":"luna"`), p + "speaker"},
		{"elevenlabs speaker null", tts(`"speaker":null`), ""},
		{"elevenlabs speed", tts(`"speed":"fast"`), p + "speed"},
		{"elevenlabs emotion", tts(`"emotion":"anger"`), p + "emotion"},
		{"elevenlabs speed_alpha", tts(`"speed_alpha":1`), p + "speed_alpha"},
		{"streaming_latency 0", tts(`"streaming_latency":0`), ""},
		{"streaming_latency 4", tts(`"streaming_latency":4`), ""},
		{"streaming_latency -1", tts(`"streaming_latency":-1`), p + "streaming_latency"},
		{"streaming_latency 5", tts(`"streaming_latency":5`), p + "streaming_latency"},
		{"streaming_latency null", tts(`"streaming_latency":null`), p + "streaming_latency"},
		{"streaming_latency fraction", tts(`"streaming_latency":1.5`), p + "streaming_latency"},
	})
	runRules(t, withTTS(data.TTSCartesia), []ruleCase{
		{"cartesia without voice_id", tts(`"voice_id":null`), p + "voice_id"},
		{"cartesia streaming_latency allowed", tts(`"streaming_latency":2`), ""},
		{"speed unknown", tts(`"speed":"medium"`), p + "speed"},
		{"speed null", tts(`"speed":null`), ""},
		{"emotion null", tts(`"emotion":null`), ""},
		{"emotion unknown", tts(`"emotion":"joy"`), p + "emotion"},
		{"emotion level unknown", tts(`"emotion":"anger:medium"`), p + "emotion"},
		{"emotion empty level", tts(`"emotion":"anger:"`), p + "emotion"},
		{"emotion upper case", tts(`"emotion":"Anger"`), p + "emotion"},
		{"cartesia speaker", tts(`"speaker":"luna"`), p + "speaker"},
		{"cartesia speed_alpha", tts(`"speed_alpha":1`), p + "speed_alpha"},
	})
	for _, s := range []string{"fastest", "fast", "normal", "slow", "slowest"} {
		runRules(t, withTTS(data.TTSCartesia), []ruleCase{{"speed " + s, tts(`"speed":"` + s + `"`), ""}})
	}
	for _, e := range []string{"anger", "positivity", "surprise", "sadness", "curiosity"} {
		runRules(t, withTTS(data.TTSCartesia), []ruleCase{{"emotion " + e, tts(`"emotion":"` + e + `"`), ""}})
		for _, l := range []string{"lowest", "low", "high", "highest"} {
			runRules(t, withTTS(data.TTSCartesia), []ruleCase{{"emotion " + e + ":" + l, tts(`"emotion":"` + e + ":" + l + `"`), ""}})
		}
	}
	runRules(t, withTTS(data.TTSRime), []ruleCase{
		{"rime without speaker", tts(`"speaker":null`), p + "speaker"},
		{"rime blank speaker", tts(`"speaker":" "`), p + "speaker"},
		{"rime voice_id", tts(`"voice_id":"abc"`), p + "voice_id"},
		{"rime speed", tts(`"speed":"fast"`), p + "speed"},
		{"rime emotion", tts(`"emotion":"anger"`), p + "emotion"},
		{"speed_alpha min", tts(`"speed_alpha":0.1`), ""},
		{"speed_alpha max", tts(`"speed_alpha":5`), ""},
		{"speed_alpha below", tts(`"speed_alpha":0.09`), p + "speed_alpha"},
		{"speed_alpha above", tts(`"speed_alpha":5.01`), p + "speed_alpha"},
		{"speed_alpha null", tts(`"speed_alpha":null`), p + "speed_alpha"},
	})
	t.Run("rime without streaming_latency", func(t *testing.T) {
		_, faults := apply(t, stored(), false, tts(`"provider":"rime","model":"mistv2","speaker":"cove"`))
		if len(faults) != 1 || faults[p+"streaming_latency"] == nil {
			t.Fatalf("got %v", faults)
		}
	})
}

func TestTTSProviderSwitch(t *testing.T) {
	const p = "tts_config."
	t.Run("every field but provider is dropped", func(t *testing.T) {
		_, faults := apply(t, stored(), false, tts(`"provider":"cartesia"`))
		if len(faults) != 2 || faults[p+"model"] == nil || faults[p+"voice_id"] == nil {
			t.Fatalf("want faults on model and voice_id, got %v", faults)
		}
	})
	t.Run("nothing of elevenlabs reaches cartesia", func(t *testing.T) {
		a, faults := apply(t, stored(), false, tts(`"provider":"cartesia","model":"sonic-2","voice_id":"v1"`))
		if faults != nil || a.TTSConfig.StreamingLatency != nil || *a.TTSConfig.VoiceID != "v1" {
			t.Fatalf("faults %v, config %+v", faults, a.TTSConfig)
		}
	})
	t.Run("cartesia fields do not survive a switch to rime", func(t *testing.T) {
		a, faults := apply(t, withTTS(data.TTSCartesia)(), false, tts(`"provider":"rime","model":"mistv2","speaker":"cove","streaming_latency":0`))
		if faults != nil || a.TTSConfig.Speed != nil || a.TTSConfig.Emotion != nil || a.TTSConfig.VoiceID != nil {
			t.Fatalf("faults %v, config %+v", faults, a.TTSConfig)
		}
	})
	t.Run("stt model is dropped on a switch", func(t *testing.T) {
		a, faults := apply(t, stored(), false, `{"stt_config":{"provider":"assemblyai","model":"u3-rt-pro"}}`)
		if faults != nil || a.STTConfig.Model != "u3-rt-pro" {
			t.Fatalf("faults %v, config %+v", faults, a.STTConfig)
		}
	})
}
