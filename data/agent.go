package data

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// Agent statuses (conventions §7).
const (
	AgentStatusDraft     = "draft"
	AgentStatusPublished = "published"
)

// LLM providers. The spec's "the service" (deployment, endpoint, api_version) is an Azure
// OpenAI-style deployment, spelled azure on the wire (conventions §7).
const (
	LLMInternal      = "internal"
	LLMAzure         = "azure"
	LLMMistral       = "mistral"
	LLMBedrockClaude = "bedrock_claude"
	LLMGroq          = "groq"
)

// LLMProviders lists every LLM provider, in the spec's order.
var LLMProviders = []string{LLMInternal, LLMAzure, LLMMistral, LLMBedrockClaude, LLMGroq}

// STT providers.
const (
	STTDeepgram   = "deepgram"
	STTAssemblyAI = "assemblyai"
)

// STTProviders lists every speech-to-text provider.
var STTProviders = []string{STTDeepgram, STTAssemblyAI}

// TTS providers.
const (
	TTSElevenLabs = "elevenlabs"
	TTSCartesia   = "cartesia"
	TTSRime       = "rime"
)

// TTSProviders lists every text-to-speech provider.
var TTSProviders = []string{TTSElevenLabs, TTSCartesia, TTSRime}

// Tool types (items of llm_config.tools).
const (
	ToolEndCall                = "end_call"
	ToolTransferCall           = "transfer_call"
	ToolPressIVR               = "press_ivr"
	ToolSendSMS                = "send_sms"
	ToolExtractDynamicVariable = "extract_dynamic_variable"
	ToolCustomFunction         = "custom_function"
)

// ToolTypes lists every tool type, in the spec's order.
var ToolTypes = []string{ToolEndCall, ToolTransferCall, ToolPressIVR, ToolSendSMS, ToolExtractDynamicVariable, ToolCustomFunction}

// Agent is an agent record as the service returns it (conventions §7).
type Agent struct {
	ID               string `json:"id"`
	WorkspaceID      string `json:"workspace_id"`
	Name             string `json:"name"`
	Status           string `json:"status"`
	PublishedVersion *int   `json:"published_version"`
	AgentConfig
	// Privacy is the agent's retention and redaction: policy, not behaviour, so it is no
	// part of a version and a restore or publish leaves it as it is.
	Privacy AgentPrivacy `json:"privacy"`
	// MaxConcurrentCalls bounds the agent's open calls (conventions §23); nil is no bound.
	// Capacity is policy too: no part of a version, so a rollout's variants share it.
	MaxConcurrentCalls *int `json:"max_concurrent_calls"`
	// UsedVariables are the {{name}} references of the configuration, sorted: read-only,
	// computed for responses (conventions §23).
	UsedVariables []string `json:"used_variables"`
	CreatedAt     Time     `json:"created_at"`
	UpdatedAt     Time     `json:"updated_at"`
	PublishedAt   *Time    `json:"published_at"`
}

// AgentConfig is the seven configuration groups of an agent: what a version snapshots.
// It has no MarshalJSON of its own on purpose: it is embedded, and one would be promoted.
type AgentConfig struct {
	CallConfig          CallConfig          `json:"call_config"`
	KnowledgeBaseConfig KnowledgeBaseConfig `json:"knowledge_base_config"`
	LLMConfig           LLMConfig           `json:"llm_config"`
	PromptConfig        PromptConfig        `json:"prompt_config"`
	STTConfig           STTConfig           `json:"stt_config"`
	TTSConfig           TTSConfig           `json:"tts_config"`
	// AnalysisConfig is what post-call analysis extracts (agent_analysis.go).
	AnalysisConfig AnalysisConfig `json:"analysis_config"`
}

// AgentSnapshot is what a version records and what a diff compares: name and every group.
type AgentSnapshot struct {
	Name string `json:"name"`
	AgentConfig
}

// Snapshot returns the agent's name and configuration.
func (a *Agent) Snapshot() AgentSnapshot {
	return AgentSnapshot{Name: a.Name, AgentConfig: a.AgentConfig}
}

// Clone returns a deep copy, so a caller may change it without touching a as well.
func (a *Agent) Clone() *Agent {
	var c Agent
	cloneJSON(a, &c)
	return &c
}

// Masked returns a copy whose credentials are masked for a response (conventions §9).
func (a Agent) Masked() Agent {
	a.LLMConfig.APIKey = maskPtr(a.LLMConfig.APIKey)
	a.AgentConfig = maskHeaders(a.AgentConfig)
	return a
}

// CallConfig is the call_config group.
type CallConfig struct {
	MaxCallDurationMS int `json:"max_call_duration_ms"`
	RingDurationMS    int `json:"ring_duration_ms"`
}

// KnowledgeBaseConfig is the knowledge_base_config group.
type KnowledgeBaseConfig struct {
	ChunksToRetrieve    int      `json:"chunks_to_retrieve"`
	SimilarityThreshold *float64 `json:"similarity_threshold"`
}

// LLMConfig is the llm_config group.
//
// Optional fields that are not nullable are pointers (numbers, where 0 is a value) or
// strings (where "" means absent), tagged strict:"nonnull" and omitted when absent: a
// response never shows them as null, so sending a response back is always accepted.
type LLMConfig struct {
	Provider         string   `json:"provider"`
	Model            string   `json:"model,omitempty"`
	Temperature      *float64 `json:"temperature,omitempty" strict:"nonnull"`
	Deployment       string   `json:"deployment,omitempty"`
	Endpoint         string   `json:"endpoint,omitempty"`
	APIVersion       string   `json:"api_version,omitempty"`
	BaseURL          string   `json:"base_url,omitempty"`
	APIKey           *string  `json:"api_key"`
	Region           string   `json:"region,omitempty"`
	MaxTokens        *int     `json:"max_tokens,omitempty" strict:"nonnull"`
	KnowledgeBaseIDs []string `json:"knowledge_base_ids"`
	Tools            []*Tool  `json:"tools"` // an item may be null (spec)
}

// MarshalJSON writes arrays as [] rather than null: stored records are decoded strictly
// again during merges, where null is not an array.
// Written by hand (agent_json.go): encoding/json would scan the result again.
func (c LLMConfig) MarshalJSON() ([]byte, error) { return c.appendJSON(nil) }

// Tool is an item of llm_config.tools.
type Tool struct {
	Name                        string                `json:"name"`
	Type                        string                `json:"type"`
	Description                 *string               `json:"description"`
	AnnouncementType            *string               `json:"announcement_type"`
	AnnouncementMessage         *string               `json:"announcement_message"`
	AnnouncementPrompt          *string               `json:"announcement_prompt"`
	TransferDeclinedMessage     *string               `json:"transfer_declined_message"`
	HoldAudio                   *string               `json:"hold_audio"`
	CustomSIPHeaders            map[string]string     `json:"custom_sip_headers" strict:"nonnull"`
	VoicemailDetection          *bool                 `json:"voicemail_detection"`
	VoicemailResponseActionType *string               `json:"voicemail_response_action_type"`
	VoicemailResponseText       *string               `json:"voicemail_response_text"`
	PhoneDirectory              []PhoneDirectoryEntry `json:"phone_directory"`
	PauseDetectionDelayMS       *int                  `json:"pause_detection_delay_ms"`
	ContentType                 string                `json:"content_type,omitempty"`
	Content                     string                `json:"content,omitempty"`
	HTTPMethod                  string                `json:"http_method,omitempty"`
	APIEndpoint                 string                `json:"api_endpoint,omitempty"`
	Timeout                     *int                  `json:"timeout"`
	CustomFunctionHeaders       []string              `json:"custom_function_headers"`
	CustomFunctionQuery         []string              `json:"custom_function_query"`
	CustomFunctionParameters    *string               `json:"custom_function_parameters"`
	CustomFunctionVariables     []string              `json:"custom_function_variables"`
	SpeakDuringExecution        *bool                 `json:"speak_during_execution"`
	SpeakDuringExecutionOptions []string              `json:"speak_during_execution_options"`
	SpeakAfterExecution         *bool                 `json:"speak_after_execution"`
	Variables                   []ToolVariable        `json:"variables"`
}

// MarshalJSON writes arrays as [] and custom_sip_headers as {}, never null.
func (t Tool) MarshalJSON() ([]byte, error) { return t.appendJSON(nil) }

// PhoneDirectoryEntry is an item of a transfer_call tool's phone_directory.
type PhoneDirectoryEntry struct {
	Name         string `json:"name"`
	PhoneNumber  string `json:"phone_number"`
	Description  string `json:"description"`
	TransferType string `json:"transfer_type"`
}

// ToolVariable is an item of an extract_dynamic_variable tool's variables.
type ToolVariable struct {
	Type        string   `json:"type"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Choices     []string `json:"choices"`
}

// MarshalJSON writes choices as [], never null.
func (v ToolVariable) MarshalJSON() ([]byte, error) { return v.appendJSON(nil), nil }

// PromptConfig is the prompt_config group.
type PromptConfig struct {
	Prompt              string   `json:"prompt"`
	FirstSpeaker        string   `json:"first_speaker"`
	AISpeakAfterSilence bool     `json:"ai_speak_after_silence"`
	AISpeakWaitTime     *float64 `json:"ai_speak_wait_time,omitempty" strict:"nonnull"`
	WelcomeMessageType  string   `json:"welcome_message_type"`
	WelcomeMessage      string   `json:"welcome_message,omitempty"`
	// DefaultVariables are the lowest-precedence values of the {{name}} references
	// (conventions §23). They are versioned with the texts they fill: a version that
	// starts using {{plan}} brings its default along, and each variant of a rollout
	// runs with its own.
	DefaultVariables map[string]any `json:"default_variables"`
	// Timezone is the IANA zone the built-in current_time is written in.
	Timezone string `json:"timezone"`
}

// DefaultTimezone is the timezone of an agent that sets none (and of agents stored
// before timezone existed).
const DefaultTimezone = "UTC"

// MarshalJSON shows default_variables as {} and timezone as UTC when absent: agents and
// versions stored before they existed read as the defaults.
func (c PromptConfig) MarshalJSON() ([]byte, error) {
	type plain PromptConfig
	if c.DefaultVariables == nil {
		c.DefaultVariables = map[string]any{}
	}
	if c.Timezone == "" {
		c.Timezone = DefaultTimezone
	}
	return json.Marshal(plain(c))
}

// Location is the timezone current_time is written in (UTC when unset or unknown:
// validation keeps unknown zones out).
func (c PromptConfig) Location() *time.Location {
	if c.Timezone == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// STTConfig is the stt_config group.
type STTConfig struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// TTSConfig is the tts_config group. speed and emotion are cartesia only; speaker and
// speed_alpha rime only.
type TTSConfig struct {
	Provider         string   `json:"provider"`
	Model            string   `json:"model"`
	VoiceID          *string  `json:"voice_id"`
	Speaker          *string  `json:"speaker"`
	StreamingLatency *int     `json:"streaming_latency,omitempty" strict:"nonnull"`
	Speed            *string  `json:"speed"`
	Emotion          *string  `json:"emotion"`
	SpeedAlpha       *float64 `json:"speed_alpha,omitempty" strict:"nonnull"`
}

// AgentVersion is a published snapshot of an agent (conventions §7).
type AgentVersion struct {
	AgentID       string  `json:"agent_id"`
	VersionNumber int     `json:"version_number"`
	Description   *string `json:"description"`
	Name          string  `json:"name"`
	AgentConfig
	CreatedAt   Time   `json:"created_at"`
	PublishedBy string `json:"published_by"` // user id
}

// Snapshot returns the version's name and configuration.
func (v *AgentVersion) Snapshot() AgentSnapshot {
	return AgentSnapshot{Name: v.Name, AgentConfig: v.AgentConfig}
}

// Masked returns a copy whose credentials are masked for a response.
func (v AgentVersion) Masked() AgentVersion {
	v.LLMConfig.APIKey = maskPtr(v.LLMConfig.APIKey)
	v.AgentConfig = maskHeaders(v.AgentConfig)
	return v
}

// Default configuration of a new agent; each omitted group of a create gets its default.
const (
	DefaultMaxCallDurationMS = 3_600_000 // one hour: long calls are possible, runaway ones end
	DefaultRingDurationMS    = 30_000    // about six rings
	DefaultChunksToRetrieve  = 3
	DefaultLLMModel          = "llama-3.3-70b-versatile" // Groq: fast, good at tool calls
	DefaultTemperature       = 0.5
	DefaultPrompt            = "You are a friendly, helpful voice assistant on a phone call. Keep your answers short and conversational, ask one question at a time, and say when you do not know something."
	DefaultWelcomeMessage    = "Hello! How can I help you today?"
	DefaultAISpeakWaitTime   = 2.0 // seconds; used once ai_speak_after_silence is turned on
	DefaultSTTModel          = "nova-3"
	DefaultTTSModel          = "eleven_flash_v2_5"    // ElevenLabs' lowest-latency model
	DefaultVoiceID           = "JBFqnCBsd6RMkjVDRZzb" // ElevenLabs premade voice "George"
	// DefaultStreamingLatency is strong latency optimization; 4 would also turn off
	// ElevenLabs' text normalizer, which misreads numbers and dates.
	DefaultStreamingLatency = 3
)

// DefaultAgentConfig returns a complete, valid configuration, so that an agent created
// with only a name can be published at once: Groq llama-3.3-70b-versatile at temperature
// 0.5 with no tools, Deepgram nova-3, ElevenLabs eleven_flash_v2_5 with the voice George,
// the AI speaking first with a static greeting, calls of at most an hour ringing 30 s,
// 3 knowledge base chunks with no similarity threshold, and no post-call analysis.
func DefaultAgentConfig() AgentConfig {
	temperature, wait, latency := DefaultTemperature, DefaultAISpeakWaitTime, DefaultStreamingLatency
	voice := DefaultVoiceID
	return AgentConfig{
		CallConfig: CallConfig{MaxCallDurationMS: DefaultMaxCallDurationMS, RingDurationMS: DefaultRingDurationMS},
		// No threshold: the best chunks are used however weak; a threshold depends on the
		// content, so the user sets one knowingly.
		KnowledgeBaseConfig: KnowledgeBaseConfig{ChunksToRetrieve: DefaultChunksToRetrieve},
		LLMConfig: LLMConfig{
			Provider:         LLMGroq,
			Model:            DefaultLLMModel,
			Temperature:      &temperature,
			KnowledgeBaseIDs: []string{},
			Tools:            []*Tool{},
		},
		PromptConfig: PromptConfig{
			Prompt:             DefaultPrompt,
			FirstSpeaker:       "ai",
			AISpeakWaitTime:    &wait,
			WelcomeMessageType: "static",
			WelcomeMessage:     DefaultWelcomeMessage,
			DefaultVariables:   map[string]any{},
			Timezone:           DefaultTimezone,
		},
		STTConfig: STTConfig{Provider: STTDeepgram, Model: DefaultSTTModel},
		TTSConfig: TTSConfig{
			Provider:         TTSElevenLabs,
			Model:            DefaultTTSModel,
			VoiceID:          &voice,
			StreamingLatency: &latency,
		},
		AnalysisConfig: DefaultAnalysisConfig(),
	}
}

// DefaultAgent returns the base a create body is merged into: the default configuration,
// status draft, and nothing else set.
func DefaultAgent() *Agent {
	return &Agent{Status: AgentStatusDraft, AgentConfig: DefaultAgentConfig()}
}

// MaskSecret shows a secret as "****" and its last 4 characters; a secret shorter than 8
// characters shows only "****", since its last 4 would give away half of it.
func MaskSecret(s string) string {
	if utf8.RuneCountInString(s) < 8 {
		return "****"
	}
	r := []rune(s)
	return "****" + string(r[len(r)-4:])
}

func maskPtr(s *string) *string {
	if s == nil {
		return nil
	}
	m := MaskSecret(*s)
	return &m
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// cloneJSON copies src into dst through JSON; the types here are plain data, so it cannot fail.
func cloneJSON(src, dst any) {
	b, err := json.Marshal(src)
	if err == nil {
		err = json.Unmarshal(b, dst)
	}
	if err != nil {
		panic("voiceapi: cloning a record: " + err.Error())
	}
}

// AgentFilter selects agents to list; Status "" lists every status.
type AgentFilter struct {
	Status string
	// Name keeps agents whose name contains it, ignoring case; "" keeps all.
	Name string
	// KnowledgeBaseID keeps agents using the knowledge base: their configuration attaches
	// it or a stored version does (those a knowledge base write checks); "" keeps all.
	KnowledgeBaseID string
	PageRequest
}

// MaxAgentSearchScan bounds the agents a page of a name or knowledge base search looks
// at, on either storage engine (docs/agents.md): a search matching few of a large
// workspace's agents answers promptly, a short page with a cursor on.
const MaxAgentSearchScan = 5000

// AgentService manages agents and their versions in the caller's workspace (the principal
// in ctx). Every method may return forbidden (role, module or agent_ids), and not_found for
// an agent that is unknown, of another workspace or outside the caller's agent_ids.
type AgentService interface {
	// ListAgents returns a page of agents, newest first. Errors: validation_failed (bad
	// per_page, cursor or status).
	ListAgents(ctx context.Context, f AgentFilter) ([]*Agent, Page, error)
	// CreateAgent creates a draft agent from a body merged into the defaults. Errors:
	// validation_failed (with the decoding faults of InputFaults(ctx) too), forbidden
	// (also for callers limited by agent_ids), quota_exceeded.
	CreateAgent(ctx context.Context, in AgentCreate) (*Agent, error)
	// Agent returns one agent. Errors: not_found.
	Agent(ctx context.Context, id string) (*Agent, error)
	// UpdateAgent merges in into the agent; a change makes it a draft. Errors:
	// not_found, validation_failed (with the faults of InputFaults(ctx) too), precondition_failed (If-Match).
	UpdateAgent(ctx context.Context, id string, in AgentUpdate) (*Agent, error)
	// DeleteAgent removes the agent and its versions. Errors: not_found, precondition_failed.
	DeleteAgent(ctx context.Context, id string) error
	// PublishAgent stores the next version and marks the agent published, when its
	// required tests passed on the draft (or in.Force, for owners and admins). Errors:
	// not_found, validation_failed (description), precondition_failed, tests_required and
	// tests_failed (409, the publish gate), forbidden (force without the role).
	PublishAgent(ctx context.Context, id string, in PublishRequest) error
	// ListAgentVersions returns a page of versions, newest first. Errors: not_found,
	// validation_failed (per_page, cursor).
	ListAgentVersions(ctx context.Context, agentID string, p PageRequest) ([]*AgentVersion, Page, error)
	// AgentVersion returns one version. Errors: not_found (agent or version).
	AgentVersion(ctx context.Context, agentID string, number int) (*AgentVersion, error)
	// RestoreAgentVersion makes that version live again, creating no version. Errors:
	// not_found (agent or version), precondition_failed.
	RestoreAgentVersion(ctx context.Context, agentID string, number int) (*Agent, error)
	// DeleteAgentVersion removes a version nothing runs on; its number is never given
	// again and history keeps it. Errors: not_found (agent or version), conflict (the
	// version is in use: published, in the rollout, an open call or conversation on it).
	DeleteAgentVersion(ctx context.Context, agentID string, number int) error
	// DiffAgentVersions lists what changed from version a to version b, or to the current
	// configuration when b is nil (see DiffAgentConfig). Errors: not_found.
	DiffAgentVersions(ctx context.Context, agentID string, a int, b *int) ([]Change, error)
}
