package data

import (
	"encoding/json"
	"math"
)

// CallUsage is what a call consumed, per provider and model (docs/analysis.md, "Usage"):
// the runtime (or a conversation) reports llm, tts, stt and telephony; post-call analysis
// adds its own model's tokens under analysis. Every list is [] when empty.
type CallUsage struct {
	LLM       []LLMUsage   `json:"llm"`
	TTS       []TTSUsage   `json:"tts"`
	STT       []AudioUsage `json:"stt"`
	Telephony []AudioUsage `json:"telephony"`
	// Analysis is written by post-call analysis, never by a client: a runtime's usage
	// update keeps it.
	Analysis []LLMUsage `json:"analysis"`
}

// LLMUsage is a language model's tokens.
type LLMUsage struct {
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
}

// TTSUsage is the characters a text-to-speech model spoke.
type TTSUsage struct {
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	Characters int64  `json:"characters"`
}

// AudioUsage is seconds of audio (speech-to-text, or the phone line), to the millisecond.
type AudioUsage struct {
	Provider string  `json:"provider"`
	Model    string  `json:"model"`
	Seconds  float64 `json:"seconds"`
}

// Millis is the line's seconds in whole milliseconds, the quantity it is priced by.
// Seconds are checked to have at most three decimals, so this rounds only the float's
// own error away.
func (a AudioUsage) Millis() int64 { return int64(math.Round(a.Seconds * 1000)) }

// CallUsageInput is usage as a call's body gives it: every list optional (absent: []);
// analysis is read-only.
type CallUsageInput struct {
	LLM       []LLMUsage   `json:"llm"`
	TTS       []TTSUsage   `json:"tts"`
	STT       []AudioUsage `json:"stt"`
	Telephony []AudioUsage `json:"telephony"`
	Analysis  ReadOnly     `json:"analysis,omitzero" strict:"readonly"`
}

// MarshalJSON writes the lists given, leaving out the nil ones and analysis, which a
// body may not send (for clients building an input in Go).
func (in CallUsageInput) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	if in.LLM != nil {
		out["llm"] = in.LLM
	}
	if in.TTS != nil {
		out["tts"] = in.TTS
	}
	if in.STT != nil {
		out["stt"] = in.STT
	}
	if in.Telephony != nil {
		out["telephony"] = in.Telephony
	}
	return json.Marshal(out)
}

// Usage returns the usage the input gives, keeping analysis from kept (the stored
// usage; may be nil).
func (in *CallUsageInput) Usage(kept *CallUsage) *CallUsage {
	u := &CallUsage{LLM: orEmpty(in.LLM), TTS: orEmpty(in.TTS), STT: orEmpty(in.STT), Telephony: orEmpty(in.Telephony), Analysis: []LLMUsage{}}
	if kept != nil {
		u.Analysis = orEmpty(kept.Analysis)
	}
	return u
}

// AddAnalysis returns u (nil: none yet) with an analysis run's tokens added.
func (u *CallUsage) AddAnalysis(l LLMUsage) *CallUsage {
	out := &CallUsage{LLM: []LLMUsage{}, TTS: []TTSUsage{}, STT: []AudioUsage{}, Telephony: []AudioUsage{}}
	if u != nil {
		*out = *u
	}
	out.Analysis = append(append([]LLMUsage{}, out.Analysis...), l)
	return out
}
