package data

import (
	"encoding/json"
	"strings"
)

// AgentUpdate is the body of PUT /api/v1/agents/{agent_id}: every member is optional. A given
// group is merged member by member into the stored one (see the patches' Apply); arrays
// are replaced whole. The read-only members of the record are named so that a client
// sending a record back learns which to drop.
type AgentUpdate struct {
	AgentReadOnly
	Name                Opt[string]                   `json:"name"`
	CallConfig          Opt[CallConfigPatch]          `json:"call_config"`
	KnowledgeBaseConfig Opt[KnowledgeBaseConfigPatch] `json:"knowledge_base_config"`
	LLMConfig           Opt[LLMConfigPatch]           `json:"llm_config"`
	PromptConfig        Opt[PromptConfigPatch]        `json:"prompt_config"`
	STTConfig           Opt[STTConfigPatch]           `json:"stt_config"`
	TTSConfig           Opt[TTSConfigPatch]           `json:"tts_config"`
	AnalysisConfig      Opt[AnalysisConfigPatch]      `json:"analysis_config"`
	Privacy             Opt[AgentPrivacyPatch]        `json:"privacy"`
	// MaxConcurrentCalls is policy (no part of a version): null removes the bound.
	MaxConcurrentCalls Opt[*int] `json:"max_concurrent_calls"`
}

// AgentCreate is the body of POST /api/v1/agents: an update of the default agent (see
// DefaultAgent) in which name is required.
type AgentCreate AgentUpdate

// AgentReadOnly are the members of an agent record a body may not set: the strict decoder
// refuses each as read-only.
type AgentReadOnly struct {
	RecordReadOnly
	Status           ReadOnly `json:"status,omitzero" strict:"readonly"`
	PublishedVersion ReadOnly `json:"published_version,omitzero" strict:"readonly"`
	PublishedAt      ReadOnly `json:"published_at,omitzero" strict:"readonly"`
	UsedVariables    ReadOnly `json:"used_variables,omitzero" strict:"readonly"`
}

// ReadOnly is a record member that a body may not give; it holds nothing.
type ReadOnly struct{}

// RecordReadOnly are the members every stored record has and no body may set: a client
// sending a record back is told they are read-only, not that they are unknown.
type RecordReadOnly struct {
	ID          ReadOnly `json:"id,omitzero" strict:"readonly"`
	WorkspaceID ReadOnly `json:"workspace_id,omitzero" strict:"readonly"`
	CreatedAt   ReadOnly `json:"created_at,omitzero" strict:"readonly"`
	UpdatedAt   ReadOnly `json:"updated_at,omitzero" strict:"readonly"`
}

// Given reports whether the update gives the group named group (a wire name such as
// "llm_config").
func (u *AgentUpdate) Given(group string) bool {
	switch group {
	case "call_config":
		return u.CallConfig.Set
	case "knowledge_base_config":
		return u.KnowledgeBaseConfig.Set
	case "llm_config":
		return u.LLMConfig.Set
	case "prompt_config":
		return u.PromptConfig.Set
	case "stt_config":
		return u.STTConfig.Set
	case "tts_config":
		return u.TTSConfig.Set
	case "analysis_config":
		return u.AnalysisConfig.Set
	}
	return false
}

// Apply returns stored with the update merged in. stored is not modified: the result is a
// shallow copy whose given groups are new values, and shares the rest with stored.
func (u *AgentUpdate) Apply(stored *Agent) *Agent {
	out := *stored
	if u.Name.Set {
		out.Name = u.Name.V
	}
	if u.CallConfig.Set {
		out.CallConfig = u.CallConfig.V.Apply(out.CallConfig)
	}
	if u.KnowledgeBaseConfig.Set {
		out.KnowledgeBaseConfig = u.KnowledgeBaseConfig.V.Apply(out.KnowledgeBaseConfig)
	}
	if u.LLMConfig.Set {
		out.LLMConfig = u.LLMConfig.V.Apply(out.LLMConfig)
	}
	if u.PromptConfig.Set {
		out.PromptConfig = u.PromptConfig.V.Apply(out.PromptConfig)
	}
	if u.STTConfig.Set {
		out.STTConfig = u.STTConfig.V.Apply(out.STTConfig)
	}
	if u.TTSConfig.Set {
		out.TTSConfig = u.TTSConfig.V.Apply(out.TTSConfig)
	}
	if u.AnalysisConfig.Set {
		out.AnalysisConfig = u.AnalysisConfig.V.Apply(out.AnalysisConfig)
	}
	if u.Privacy.Set {
		out.Privacy = u.Privacy.V.Apply(out.Privacy)
	}
	set(&out.MaxConcurrentCalls, u.MaxConcurrentCalls)
	return &out
}

// CallConfigPatch is a given call_config.
type CallConfigPatch struct {
	MaxCallDurationMS Opt[int] `json:"max_call_duration_ms"`
	RingDurationMS    Opt[int] `json:"ring_duration_ms"`
}

// Apply returns stored with the given members replaced.
func (p CallConfigPatch) Apply(stored CallConfig) CallConfig {
	set(&stored.MaxCallDurationMS, p.MaxCallDurationMS)
	set(&stored.RingDurationMS, p.RingDurationMS)
	return stored
}

// KnowledgeBaseConfigPatch is a given knowledge_base_config.
type KnowledgeBaseConfigPatch struct {
	ChunksToRetrieve    Opt[int]      `json:"chunks_to_retrieve"`
	SimilarityThreshold Opt[*float64] `json:"similarity_threshold"`
}

// Apply returns stored with the given members replaced.
func (p KnowledgeBaseConfigPatch) Apply(stored KnowledgeBaseConfig) KnowledgeBaseConfig {
	set(&stored.ChunksToRetrieve, p.ChunksToRetrieve)
	set(&stored.SimilarityThreshold, p.SimilarityThreshold)
	return stored
}

// LLMConfigPatch is a given llm_config. Optional members that are not nullable are plain
// Opt values (null is refused); api_key is nullable.
type LLMConfigPatch struct {
	Provider         Opt[string]   `json:"provider"`
	Model            Opt[string]   `json:"model"`
	Temperature      Opt[float64]  `json:"temperature"`
	Deployment       Opt[string]   `json:"deployment"`
	Endpoint         Opt[string]   `json:"endpoint"`
	APIVersion       Opt[string]   `json:"api_version"`
	BaseURL          Opt[string]   `json:"base_url"`
	APIKey           Opt[*string]  `json:"api_key"`
	Region           Opt[string]   `json:"region"`
	MaxTokens        Opt[int]      `json:"max_tokens"`
	KnowledgeBaseIDs Opt[[]string] `json:"knowledge_base_ids"`
	Tools            Opt[[]*Tool]  `json:"tools"` // an item may be null (spec)
}

// Apply returns stored with the given members replaced (conventions §7): when the patch
// names another provider, the stored fields tied to the provider are dropped first
// (temperature, knowledge_base_ids and tools carry over); an api_key given as the mask of
// the stored key keeps the stored key (§9), and so does a credential header of a tool
// sent back masked (KeepMaskedHeaders).
func (p LLMConfigPatch) Apply(stored LLMConfig) LLMConfig {
	out := stored
	switched := p.Provider.Set && p.Provider.V != stored.Provider
	if switched {
		out = LLMConfig{
			Provider:         stored.Provider,
			Temperature:      stored.Temperature,
			KnowledgeBaseIDs: stored.KnowledgeBaseIDs,
			Tools:            stored.Tools,
		}
	}
	set(&out.Provider, p.Provider)
	set(&out.Model, p.Model)
	setPtr(&out.Temperature, p.Temperature)
	set(&out.Deployment, p.Deployment)
	set(&out.Endpoint, p.Endpoint)
	set(&out.APIVersion, p.APIVersion)
	set(&out.BaseURL, p.BaseURL)
	set(&out.APIKey, p.APIKey)
	set(&out.Region, p.Region)
	setPtr(&out.MaxTokens, p.MaxTokens)
	set(&out.KnowledgeBaseIDs, p.KnowledgeBaseIDs)
	set(&out.Tools, p.Tools)
	if p.Tools.Set {
		out.Tools, _ = KeepMaskedHeaders(out.Tools, stored.Tools)
	}
	if k := p.APIKey.V; !switched && k != nil && stored.APIKey != nil && IsMasked(*k) && *k == MaskSecret(*stored.APIKey) {
		out.APIKey = stored.APIKey
	}
	return out
}

// MaskPrefix starts every masked secret; no real provider key starts with it.
const MaskPrefix = "****"

// IsMasked reports whether s has the form of a masked secret.
func IsMasked(s string) bool { return strings.HasPrefix(s, MaskPrefix) }

// PromptConfigPatch is a given prompt_config.
type PromptConfigPatch struct {
	Prompt              Opt[string]  `json:"prompt"`
	FirstSpeaker        Opt[string]  `json:"first_speaker"`
	AISpeakAfterSilence Opt[bool]    `json:"ai_speak_after_silence"`
	AISpeakWaitTime     Opt[float64] `json:"ai_speak_wait_time"`
	WelcomeMessageType  Opt[string]  `json:"welcome_message_type"`
	WelcomeMessage      Opt[string]  `json:"welcome_message"`
	// DefaultVariables, given, replaces the stored map whole.
	DefaultVariables Opt[map[string]any] `json:"default_variables"`
	Timezone         Opt[string]         `json:"timezone"`
}

// Apply returns stored with the given members replaced.
func (p PromptConfigPatch) Apply(stored PromptConfig) PromptConfig {
	set(&stored.Prompt, p.Prompt)
	set(&stored.FirstSpeaker, p.FirstSpeaker)
	set(&stored.AISpeakAfterSilence, p.AISpeakAfterSilence)
	setPtr(&stored.AISpeakWaitTime, p.AISpeakWaitTime)
	set(&stored.WelcomeMessageType, p.WelcomeMessageType)
	set(&stored.WelcomeMessage, p.WelcomeMessage)
	set(&stored.DefaultVariables, p.DefaultVariables)
	set(&stored.Timezone, p.Timezone)
	return stored
}

// STTConfigPatch is a given stt_config.
type STTConfigPatch struct {
	Provider Opt[string] `json:"provider"`
	Model    Opt[string] `json:"model"`
}

// Apply returns stored with the given members replaced; another provider drops the
// stored model, which is tied to it.
func (p STTConfigPatch) Apply(stored STTConfig) STTConfig {
	if p.Provider.Set && p.Provider.V != stored.Provider {
		stored = STTConfig{Provider: stored.Provider}
	}
	set(&stored.Provider, p.Provider)
	set(&stored.Model, p.Model)
	return stored
}

// TTSConfigPatch is a given tts_config.
type TTSConfigPatch struct {
	Provider         Opt[string]  `json:"provider"`
	Model            Opt[string]  `json:"model"`
	VoiceID          Opt[*string] `json:"voice_id"`
	Speaker          Opt[*string] `json:"speaker"`
	StreamingLatency Opt[int]     `json:"streaming_latency"`
	Speed            Opt[*string] `json:"speed"`
	Emotion          Opt[*string] `json:"emotion"`
	SpeedAlpha       Opt[float64] `json:"speed_alpha"`
}

// Apply returns stored with the given members replaced; another provider drops every
// stored field but the provider, as each is tied to it.
func (p TTSConfigPatch) Apply(stored TTSConfig) TTSConfig {
	if p.Provider.Set && p.Provider.V != stored.Provider {
		stored = TTSConfig{Provider: stored.Provider}
	}
	set(&stored.Provider, p.Provider)
	set(&stored.Model, p.Model)
	set(&stored.VoiceID, p.VoiceID)
	set(&stored.Speaker, p.Speaker)
	setPtr(&stored.StreamingLatency, p.StreamingLatency)
	set(&stored.Speed, p.Speed)
	set(&stored.Emotion, p.Emotion)
	setPtr(&stored.SpeedAlpha, p.SpeedAlpha)
	return stored
}

// set replaces *dst with o's value when o is given.
func set[T any](dst *T, o Opt[T]) {
	if o.Set {
		*dst = o.V
	}
}

// setPtr replaces *dst with a pointer to o's value when o is given: the optional,
// non-nullable fields of a stored group are pointers so that absent differs from 0.
func setPtr[T any](dst **T, o Opt[T]) {
	if o.Set {
		v := o.V
		*dst = &v
	}
}

// StoredAgent is an agent as storage keeps it: llm_config.api_key sealed, and the number
// of the last version published (versions are never renumbered, even after a restore).
//
// JSON, when the service sets it, is the agent's response encoding: a.Agent masked
// (Masked, then json.Marshal's bytes), which the service also sends, records in the
// event and hashes for the ETag. Storage may keep these bytes rather than encoding the
// row again (its api_key member is masked there: the sealed key is kept beside it); nil
// means storage encodes the row itself. Storage never returns it set.
type StoredAgent struct {
	Agent
	LastVersion int             `json:"last_version"`
	JSON        json.RawMessage `json:"-"`
}

// PublishRequest is the body of POST /api/v1/agents/{agent_id}/publish. Force publishes
// past the publish gate (conventions §22): owners and admins only, audited.
type PublishRequest struct {
	Description *string `json:"description"`
	Force       bool    `json:"force"`
}
