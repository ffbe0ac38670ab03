package validate

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// The rules of the spec's Agent tables, one function per table in the spec's order; each
// line is one row. llm_config and the tool tables are in agent_llm.go.

// validateAgentName: the Agent table's only own field. name: string, max 255.
func validateAgentName(name string, errs *Errors) {
	errs.NotBlank("name", name)
	errs.MaxLen("name", name, MaxAgentName)
}

// validateCallConfig: the call_config table.
func validateCallConfig(c data.CallConfig, errs *Errors) {
	errs.IntBetween("call_config.max_call_duration_ms", int64(c.MaxCallDurationMS), MinMaxCallDurationMS, MaxMaxCallDurationMS)
	errs.IntBetween("call_config.ring_duration_ms", int64(c.RingDurationMS), MinRingDurationMS, MaxRingDurationMS)
}

// validateKnowledgeBaseConfig: the knowledge_base_config table.
func validateKnowledgeBaseConfig(c data.KnowledgeBaseConfig, errs *Errors) {
	errs.IntBetween("knowledge_base_config.chunks_to_retrieve", int64(c.ChunksToRetrieve), MinChunksToRetrieve, MaxChunksToRetrieve)
	if c.SimilarityThreshold != nil { // nullable: null means no threshold
		errs.FloatBetween("knowledge_base_config.similarity_threshold", *c.SimilarityThreshold, MinSimilarity, MaxSimilarity)
	}
}

// validatePromptConfig: the prompt_config table.
func validatePromptConfig(c data.PromptConfig, errs *Errors) {
	const p = "prompt_config."
	errs.MaxLen(p+"prompt", c.Prompt, MaxPrompt)
	enum(errs, p+"first_speaker", c.FirstSpeaker, "ai", "user")
	// ai_speak_after_silence: a boolean; the decoder checks its type.
	if c.AISpeakWaitTime == nil {
		if c.AISpeakAfterSilence {
			errs.RequiredWhen(p+"ai_speak_wait_time", p+"ai_speak_after_silence is true")
		}
	} else {
		errs.FloatBetween(p+"ai_speak_wait_time", *c.AISpeakWaitTime, MinAISpeakWaitTime, MaxAISpeakWaitTime)
	}
	enum(errs, p+"welcome_message_type", c.WelcomeMessageType, "static", "dynamic")
	if c.WelcomeMessageType == "static" {
		errs.NotBlankWhen(p+"welcome_message", c.WelcomeMessage, p+"welcome_message_type is static")
	}
	errs.MaxLen(p+"welcome_message", c.WelcomeMessage, MaxText)
	promptVariables(c, errs)
}

// validateSTTConfig: the stt_config table.
func validateSTTConfig(c data.STTConfig, cat *data.Catalog, errs *Errors) {
	const p = "stt_config."
	enum(errs, p+"provider", c.Provider, data.STTProviders...)
	model(errs, p, data.KindSTT, c.Provider, c.Model, cat)
}

// Emotion of a Cartesia voice: <emotion> or <emotion>:<level>; no level means medium.
var emotionRe = regexp.MustCompile(`^(anger|positivity|surprise|sadness|curiosity)(:(lowest|low|high|highest))?$`)

// validateTTSConfig: the tts_config table.
func validateTTSConfig(c data.TTSConfig, cat *data.Catalog, errs *Errors) {
	const p = "tts_config."
	enum(errs, p+"provider", c.Provider, data.TTSProviders...)
	model(errs, p, data.KindTTS, c.Provider, c.Model, cat)
	elevenlabs, cartesia, rime := c.Provider == data.TTSElevenLabs, c.Provider == data.TTSCartesia, c.Provider == data.TTSRime
	onProvider := p + "provider is " + c.Provider

	// voice_id: required for elevenlabs and cartesia; rime uses speaker instead.
	switch {
	case (elevenlabs || cartesia) && blank(c.VoiceID):
		errs.NotBlankWhen(p+"voice_id", deref(c.VoiceID), onProvider)
	case rime && c.VoiceID != nil:
		errs.Prohibited(p+"voice_id", onProvider+" (rime uses speaker)")
	case c.VoiceID != nil:
		errs.MaxLen(p+"voice_id", *c.VoiceID, MaxIdentifier)
	}
	// speaker: rime only, and required there.
	switch {
	case rime && blank(c.Speaker):
		errs.NotBlankWhen(p+"speaker", deref(c.Speaker), onProvider)
	case !rime && c.Speaker != nil:
		errs.Prohibited(p+"speaker", onProvider+" (speaker is for rime)")
	case c.Speaker != nil:
		errs.MaxLen(p+"speaker", *c.Speaker, MaxIdentifier)
	}
	// streaming_latency: 0 to 4; required for elevenlabs and rime.
	if c.StreamingLatency == nil {
		if elevenlabs || rime {
			errs.RequiredWhen(p+"streaming_latency", onProvider)
		}
	} else {
		errs.IntBetween(p+"streaming_latency", int64(*c.StreamingLatency), MinStreamingLatency, MaxStreamingLatency)
	}
	// speed and emotion: cartesia only.
	if c.Speed != nil {
		if cartesia {
			errs.OneOf(p+"speed", *c.Speed, "fastest", "fast", "normal", "slow", "slowest")
		} else {
			errs.Prohibited(p+"speed", onProvider+" (speed is for cartesia)")
		}
	}
	if c.Emotion != nil {
		if cartesia {
			errs.Match(p+"emotion", *c.Emotion, emotionRe,
				"<emotion> or <emotion>:<level>, emotion one of anger, positivity, surprise, sadness, curiosity, level one of lowest, low, high, highest")
		} else {
			errs.Prohibited(p+"emotion", onProvider+" (emotion is for cartesia)")
		}
	}
	// speed_alpha: rime only. The spec leaves its bounds open; Rime wants it above 0
	// (1 is normal, higher is slower), and 0.1 to 5 covers every usable pace.
	if c.SpeedAlpha != nil {
		if rime {
			errs.FloatBetween(p+"speed_alpha", *c.SpeedAlpha, MinSpeedAlpha, MaxSpeedAlpha)
		} else {
			errs.Prohibited(p+"speed_alpha", onProvider+" (speed_alpha is for rime)")
		}
	}
}

// enum checks a required enumeration: missing is "required", anything else must be listed.
func enum(errs *Errors, path, v string, allowed ...string) {
	if v == "" {
		errs.Required(path)
		return
	}
	errs.OneOf(path, v, allowed...)
}

// model checks group.model: required, and listed in the catalog for the provider. An
// unknown provider is reported on provider alone.
func model(errs *Errors, group, kind, provider, m string, cat *data.Catalog) {
	path := group + "model"
	if m == "" {
		errs.Required(path)
		return
	}
	errs.MaxLen(path, m, MaxIdentifier)
	if cat != nil && provider != "" && !errs.Has(group+"provider") && !errs.Has(path) && !cat.Valid(kind, provider, m) {
		errs.Addf(path, "The selected %s is invalid: %s is not a %s model (GET /api/v1/catalog lists them).", path, m, provider)
	}
}

// checkURL requires an absolute http or https URL of at most MaxURL characters.
func checkURL(errs *Errors, path, s string) {
	errs.MaxLen(path, s, MaxURL)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs.Addf(path, "The %s field must be a valid URL (absolute, http or https).", path)
	}
}

func blank(s *string) bool { return s == nil || strings.TrimSpace(*s) == "" }

// deref is *s, "" for nil (a missing field: NotBlankWhen says it is required).
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// noDuplicates reports each item of list equal to an earlier one, under its index.
func noDuplicates(errs *Errors, path string, list []string) {
	seen := map[string]int{}
	for i, v := range list {
		if first, dup := seen[v]; dup {
			errs.Addf(Index(path, i), "The %s field has a duplicate value: it repeats %s.", Index(path, i), Index(path, first))
			continue
		}
		seen[v] = i
	}
}
