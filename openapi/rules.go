package openapi

import (
	"fmt"
	"slices"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/redact"
	"github.com/voiceapi/voiceapi/validate"
)

// recordingURLRule and nestedObjectRule describe a call's recording_url and its objects,
// callNumberRule its numbers and transcriptRule its transcript.
var (
	callNumberRule   = fieldRule{Description: fmt.Sprintf("E.164 number or SIP URI (at most %d characters); required when direction is inbound or outbound.", validate.MaxSIPLen)}
	transcriptRule   = fieldRule{MaxItems: validate.MaxTranscriptItems, Description: fmt.Sprintf("The items' contents together at most %d bytes.", validate.MaxTranscriptBytes)}
	recordingURLRule = fieldRule{MaxLength: validate.MaxURLLen, Format: "uri",
		Description: "An http or https URL of RFC 3986 characters only (spaces, quotes and angle brackets percent-encoded), without user info."}
	nestedObjectRule = fieldRule{Description: fmt.Sprintf("At most %d KiB encoded, nested at most %d levels (the object itself is the first).", validate.MaxObjectBytes>>10, validate.MaxObjectDepth)}
)

// fieldRule is what the OpenAPI document says of one member beyond its Go type: the
// validation rules of the spec's tables (validate/*.go enforces them; the tests in
// openapi_test.go probe validate with the document's bounds so the two cannot drift).
type fieldRule struct {
	Min, Max            *float64
	MinLength           int
	MaxLength           int
	Pattern             string
	Format              string
	Enum                []string
	MinItems, MaxItems  int
	MaxProperties       int // members of a map
	UniqueItems         bool
	Items, Values, Keys *fieldRule // array items, map values, map keys
	// Required lists the member in a request body's required list.
	Required bool
	// NotNull marks a map member that is never null (a pointer or map is nullable otherwise).
	NotNull bool
	// Nullable marks a slice member that may be null (a slice is never null otherwise).
	Nullable    bool
	Description string
}

func between(lo, hi float64) fieldRule { return fieldRule{Min: &lo, Max: &hi} }
func atLeast(lo float64) fieldRule     { return fieldRule{Min: &lo} }
func maxLen(n int) fieldRule           { return fieldRule{MaxLength: n} }
func oneOf(v ...string) fieldRule      { return fieldRule{Enum: v} }

// with returns r with the required flag and a description.
func (r fieldRule) with(required bool, description string) fieldRule {
	r.Required, r.Description = required, description
	return r
}

// apply writes the rule into s, a member's schema before it is widened to null.
func (r fieldRule) apply(s map[string]any) {
	if r.Min != nil {
		s["minimum"] = *r.Min
	}
	if r.Max != nil {
		s["maximum"] = *r.Max
	}
	if r.MinLength > 0 {
		s["minLength"] = r.MinLength
	}
	if r.MaxLength > 0 {
		s["maxLength"] = r.MaxLength
	}
	if r.Pattern != "" {
		s["pattern"] = r.Pattern
	}
	if r.Format != "" {
		s["format"] = r.Format
	}
	if len(r.Enum) > 0 {
		enum := make([]any, len(r.Enum))
		for i, v := range r.Enum {
			enum[i] = v
		}
		s["enum"] = enum
	}
	if r.MinItems > 0 {
		s["minItems"] = r.MinItems
	}
	if r.MaxItems > 0 {
		s["maxItems"] = r.MaxItems
	}
	if r.MaxProperties > 0 {
		s["maxProperties"] = r.MaxProperties
	}
	if r.UniqueItems {
		s["uniqueItems"] = true
	}
	if r.Items != nil {
		if items, ok := s["items"].(map[string]any); ok {
			r.Items.apply(items)
		}
	}
	if r.Values != nil {
		if values, ok := s["additionalProperties"].(map[string]any); ok {
			r.Values.apply(values)
		}
	}
	if r.Keys != nil {
		keys := map[string]any{}
		r.Keys.apply(keys)
		s["propertyNames"] = keys
	}
	if r.Description != "" {
		s["description"] = r.Description
	}
}

// Patterns of validate's unexported regular expressions, spelled the same way.
const (
	namePattern       = `^[a-zA-Z_-][a-zA-Z0-9_-]*$`
	regionPattern     = `^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`
	headerNamePattern = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"
	emotionPattern    = `^(anger|positivity|surprise|sadness|curiosity)(:(lowest|low|high|highest))?$`
	e164Pattern       = `^\+[1-9]\d{1,14}$`
	datePattern       = `^\d{4}-\d{2}-\d{2}$`
	moneyPattern      = `^-?\d{1,12}(\.\d{1,6})?$`
	currencyPattern   = `^[A-Z]{3}$`
)

// webhookEventNames are the values of a webhook's events: every event type, or "*".
var webhookEventNames = append(slices.Clone(data.EventTypes), data.WebhookAllEvents)

// fieldRules are keyed by schema name (the Go type's name; an "Input" twin shares its
// type's rules) and member name. Bounds the spec gives as numbers and validate checks as
// literals are literals here too; named bounds use validate's constants.
var fieldRules = map[string]map[string]fieldRule{
	// The spec's Agent tables (validate/agent_groups.go, validate/agent_llm.go).
	"CallConfig": {
		"max_call_duration_ms": between(validate.MinMaxCallDurationMS, validate.MaxMaxCallDurationMS).with(false, "Milliseconds."),
		"ring_duration_ms":     between(validate.MinRingDurationMS, validate.MaxRingDurationMS).with(false, "Milliseconds before the call counts as unanswered."),
	},
	"KnowledgeBaseConfig": {
		"chunks_to_retrieve":   between(validate.MinChunksToRetrieve, validate.MaxChunksToRetrieve),
		"similarity_threshold": between(validate.MinSimilarity, validate.MaxSimilarity).with(false, "null: no threshold."),
	},
	"LLMConfig": {
		"provider":           oneOf(data.LLMProviders...).with(false, "azure is the spec's \"the service\": an Azure OpenAI-style deployment."),
		"model":              maxLen(validate.MaxIdentifier).with(false, "A model of the provider (GET /api/v1/catalog); optional for azure; any name for internal and azure."),
		"temperature":        between(validate.MinTemperature, validate.MaxTemperature).with(false, "Required when provider is bedrock_claude or internal."),
		"deployment":         maxLen(validate.MaxIdentifier).with(false, "Required when provider is azure; refused otherwise."),
		"endpoint":           fieldRule{MaxLength: validate.MaxURL, Format: "uri", Description: "http or https URL; required when provider is azure; refused otherwise."},
		"api_version":        maxLen(validate.MaxIdentifier).with(false, "Required when provider is azure; refused otherwise."),
		"base_url":           fieldRule{MaxLength: validate.MaxURL, Format: "uri", Description: "http or https URL of an OpenAI-compatible server; required when provider is internal; refused otherwise."},
		"api_key":            maxLen(validate.MaxSecret).with(false, "A secret: responses show it masked (****1234); sending the masked value back keeps it, unless the provider's address moves to another origin (then it must be given again); null clears it."),
		"region":             fieldRule{MaxLength: validate.MaxIdentifier, Pattern: regionPattern, Description: "AWS region; required when provider is bedrock_claude; refused otherwise."},
		"max_tokens":         atLeast(1).with(false, "Required when provider is bedrock_claude."),
		"knowledge_base_ids": {UniqueItems: true, Description: "Ids of knowledge bases of the workspace."},
		"tools":              {Description: "Tool names are unique within the agent; an item may be null."},
	},
	"Tool": {
		"name":                           fieldRule{MaxLength: validate.MaxToolName, Pattern: namePattern}.with(true, ""),
		"type":                           oneOf(data.ToolTypes...).with(true, ""),
		"description":                    maxLen(validate.MaxToolDescription),
		"announcement_type":              oneOf("static", "prompt"),
		"announcement_message":           maxLen(validate.MaxText),
		"announcement_prompt":            maxLen(validate.MaxText),
		"transfer_declined_message":      maxLen(validate.MaxText),
		"hold_audio":                     maxLen(validate.MaxHoldAudio),
		"custom_sip_headers":             {Values: &fieldRule{MaxLength: validate.MaxText}, Keys: &fieldRule{MaxLength: validate.MaxIdentifier, Pattern: headerNamePattern}, Description: "Header name to header value."},
		"voicemail_response_action_type": oneOf("prompt", "hangup", "message"),
		"voicemail_response_text":        maxLen(validate.MaxText),
		"phone_directory":                {Description: "Required (non-empty) when type is transfer_call."},
		"pause_detection_delay_ms":       between(validate.MinPauseDetectionMS, validate.MaxPauseDetectionMS),
		"content_type":                   oneOf("prompt", "static").with(false, "Required when type is send_sms."),
		"content":                        maxLen(validate.MaxText).with(false, "Required when type is send_sms."),
		"http_method":                    oneOf("GET", "POST", "PUT", "PATCH", "DELETE"),
		"api_endpoint":                   {MaxLength: validate.MaxURL, Format: "uri", Description: "http or https URL."},
		"timeout":                        atLeast(0),
		"custom_function_headers":        {Items: &fieldRule{MaxLength: validate.MaxText}, Description: "\"Name: value\" items. An item whose name is Authorization, Proxy-Authorization or Cookie, or contains key, token, secret, auth, password, passwd, signature, session or credential (any case), is a secret: its value is encrypted at rest and responses show it masked after the name (Authorization: ****1234). Sending that masked item back keeps the stored value of the same tool's header of that name (the n-th masked item of a name, the n-th stored one), unless api_endpoint moves to another origin (then it must be given again); a masked item that matches no stored value is 422. Other headers are shown as they are."},
		"custom_function_query":          {Items: &fieldRule{MaxLength: validate.MaxText}},
		"custom_function_parameters":     maxLen(validate.MaxPrompt),
		"custom_function_variables":      {Items: &fieldRule{MaxLength: validate.MaxIdentifier}},
		"speak_during_execution_options": {Items: &fieldRule{MaxLength: validate.MaxText}},
		"variables":                      {Description: "Required (non-empty) when type is extract_dynamic_variable; names unique."},
	},
	"PhoneDirectoryEntry": {
		"name":          fieldRule{MinLength: 1, MaxLength: validate.MaxIdentifier}.with(true, ""),
		"phone_number":  fieldRule{MinLength: 1, MaxLength: validate.MaxIdentifier}.with(true, ""),
		"description":   fieldRule{MinLength: 1, MaxLength: validate.MaxText}.with(true, ""),
		"transfer_type": oneOf("warm", "cold").with(true, ""),
	},
	"ToolVariable": {
		"type":        oneOf("string", "number", "boolean", "enum").with(true, ""),
		"name":        fieldRule{MaxLength: validate.MaxIdentifier, Pattern: namePattern}.with(true, ""),
		"description": fieldRule{MinLength: 1, MaxLength: validate.MaxText}.with(true, ""),
		"choices":     {UniqueItems: true, Items: &fieldRule{MinLength: 1, MaxLength: validate.MaxIdentifier}, Description: "Required (non-empty) when type is enum; refused otherwise."},
	},
	"PromptConfig": {
		"prompt":               maxLen(validate.MaxPrompt),
		"first_speaker":        oneOf("ai", "user"),
		"ai_speak_wait_time":   between(validate.MinAISpeakWaitTime, validate.MaxAISpeakWaitTime).with(false, "Seconds; required when ai_speak_after_silence is true."),
		"welcome_message_type": oneOf("static", "dynamic").with(false, "dynamic derives the greeting from prompt."),
		"welcome_message":      maxLen(validate.MaxText).with(false, "Required when welcome_message_type is static."),
	},
	"STTConfig": {
		"provider": oneOf(data.STTProviders...),
		"model":    maxLen(validate.MaxIdentifier).with(false, "A model of the provider (GET /api/v1/catalog)."),
	},
	"TTSConfig": {
		"provider":          oneOf(data.TTSProviders...),
		"model":             maxLen(validate.MaxIdentifier).with(false, "A model of the provider (GET /api/v1/catalog)."),
		"voice_id":          maxLen(validate.MaxIdentifier).with(false, "Required when provider is elevenlabs or cartesia; refused for rime."),
		"speaker":           maxLen(validate.MaxIdentifier).with(false, "rime only, and required there."),
		"streaming_latency": between(validate.MinStreamingLatency, validate.MaxStreamingLatency).with(false, "0 disables, 4 is the most latency optimization; required when provider is elevenlabs or rime."),
		"speed":             oneOf("fastest", "fast", "normal", "slow", "slowest").with(false, "cartesia only."),
		"emotion":           fieldRule{Pattern: emotionPattern, Description: "cartesia only: <emotion> or <emotion>:<level>."},
		"speed_alpha":       between(validate.MinSpeedAlpha, validate.MaxSpeedAlpha).with(false, "rime only; 1 is normal, higher is slower."),
	},
	// analysis_config (validate/agent_analysis.go, docs/analysis.md).
	"AnalysisConfig": {
		"fields": {MaxItems: validate.MaxAnalysisFields, Description: "The values post-call analysis extracts; names unique."},
		"success_criterion": fieldRule{MinLength: 1, MaxLength: validate.MaxSuccessCriterion}.with(false,
			"When set, analysis says whether the call met it (analysis.call_successful); null: not asked."),
		"summary": {Description: "Analysis writes a summary of the call (analysis.summary)."},
		"auto":    {Description: "Analyze every call of the agent when it ends (a durable job)."},
	},
	"AnalysisField": {
		"name": fieldRule{MaxLength: validate.MaxAnalysisFieldName, Pattern: namePattern}.with(true,
			"Not call_successful or summary, which analysis writes itself."),
		"type":        oneOf(data.AnalysisFieldTypes...).with(true, "date: YYYY-MM-DD."),
		"description": fieldRule{MinLength: 1, MaxLength: validate.MaxAnalysisFieldDescription}.with(true, "What the model is asked for."),
		"choices": {MaxItems: validate.MaxAnalysisChoices, UniqueItems: true, Items: &fieldRule{MinLength: 1, MaxLength: validate.MaxIdentifier},
			Description: "The values of an enum field: required (non-empty) when type is enum; refused otherwise."},
		"required": {Description: "An analysis without this field (or with null) is refused; the model must give it."},
	},
	// Usage, cost and the price table (validate/call_analysis.go, docs/analysis.md).
	"PriceTableSet": {
		"currency": fieldRule{Pattern: currencyPattern}.with(true, "ISO 4217, e.g. USD."),
		"prices":   fieldRule{MaxItems: validate.MaxPrices}.with(true, "A provider, model and unit at most once."),
	},
	"PriceTable": {"currency": {Pattern: currencyPattern}},
	"AnalysisBackfill": {
		"from":          fieldRule{}.with(true, "Calls created at or after this time."),
		"to":            fieldRule{}.with(true, "Calls created before this time; after from."),
		"agent_version": atLeast(1).with(false, "The version whose analysis_config is used; the published version when omitted."),
	},
	"PriceSet": priceRules,
	"Price":    priceRules,
	"CallUsageInput": {
		"llm":       {MaxItems: validate.MaxUsageLines},
		"tts":       {MaxItems: validate.MaxUsageLines},
		"stt":       {MaxItems: validate.MaxUsageLines},
		"telephony": {MaxItems: validate.MaxUsageLines, Description: "Seconds of the phone line."},
		"analysis":  {Description: "Read-only: post-call analysis's own tokens."},
	},
	"CallUsage": {"analysis": {Description: "Post-call analysis's own tokens, written by analysis."}},
	"LLMUsage": {
		"provider":      fieldRule{MinLength: 1, MaxLength: validate.MaxIdentifier}.with(true, ""),
		"model":         maxLen(validate.MaxIdentifier),
		"input_tokens":  between(0, validate.MaxUsageTokens),
		"output_tokens": between(0, validate.MaxUsageTokens),
	},
	"TTSUsage": {
		"provider":   fieldRule{MinLength: 1, MaxLength: validate.MaxIdentifier}.with(true, ""),
		"model":      maxLen(validate.MaxIdentifier),
		"characters": between(0, validate.MaxUsageCharacters),
	},
	"AudioUsage": {
		"provider": fieldRule{MinLength: 1, MaxLength: validate.MaxIdentifier}.with(true, ""),
		"model":    maxLen(validate.MaxIdentifier),
		"seconds":  between(0, validate.MaxUsageSeconds).with(false, "To the millisecond: at most three decimals."),
	},
	"CostLine": {
		"kind":     oneOf("llm", "tts", "stt", "telephony", "analysis"),
		"unit":     oneOf(data.PriceUnits...),
		"quantity": {Description: "Tokens, characters or milliseconds."},
	},
	"Agent": {
		"name":   maxLen(validate.MaxAgentName),
		"status": oneOf(data.AgentStatusDraft, data.AgentStatusPublished),
	},
	"AgentCreate": {"name": fieldRule{MinLength: 1, MaxLength: validate.MaxAgentName}.with(true, "")},
	"AgentUpdate": {"name": fieldRule{MinLength: 1, MaxLength: validate.MaxAgentName}},
	"PublishRequest": {
		"description": maxLen(validate.MaxPublishDescription).with(false, "Describes this version."),
	},

	// Accounts (validate/account.go).
	"LoginRequest": {
		"email":        fieldRule{MinLength: 1}.with(true, ""),
		"password":     fieldRule{MinLength: 1}.with(true, ""),
		"workspace_id": {MinLength: 1, Description: "The workspace the token acts in; the user's personal workspace when omitted or null. An empty string names no workspace: 422 on workspace_id."},
	},
	"APIKey":          apiKeyRules,
	"WorkspaceAPIKey": apiKeyRules,
	"APIKeyCreate": {
		"name":       fieldRule{MinLength: 1, MaxLength: validate.MaxNameLen}.with(true, ""),
		"expiration": fieldRule{Format: "date", Pattern: datePattern, Description: "YYYY-MM-DD, a future date; expires_at is that date at 00:00:00Z."},
		"scopes": {MinItems: 1, UniqueItems: true, Items: &fieldRule{Enum: data.Scopes},
			Description: "Limits the key to these scopes, within its user's role, modules and agent_ids; omitted: the user's full rights. A write scope includes its read scope; calls:runtime allows registering and updating calls and reading agents, numbers and knowledge. A key with scopes can only make keys within its own."},
		"agent_ids": {MaxItems: validate.MaxIDListItems, UniqueItems: true, Description: "Narrows the key to these agents of the workspace (within its user's agent_ids); omitted or []: no narrowing."},
	},
	"UserCreate": {
		"name":     fieldRule{MinLength: 1, MaxLength: validate.MaxNameLen}.with(true, ""),
		"email":    fieldRule{MaxLength: validate.MaxEmailLen, Format: "email"}.with(true, ""),
		"password": fieldRule{MinLength: validate.MinPasswordLen}.with(true, "At most 72 bytes."),
	},
	"UserUpdate": {
		"name":             fieldRule{MinLength: 1, MaxLength: validate.MaxNameLen},
		"email":            {MaxLength: validate.MaxEmailLen, Format: "email"},
		"password":         fieldRule{MinLength: validate.MinPasswordLen}.with(false, "At most 72 bytes."),
		"current_password": {Description: "Required when password is present."},
	},
	"WorkspaceCreate": {
		"name":        fieldRule{MinLength: 1, MaxLength: validate.MaxNameLen}.with(true, ""),
		"description": maxLen(validate.MaxDescriptionLen),
	},
	"WorkspaceUpdate": {
		"name":        fieldRule{MinLength: 1, MaxLength: validate.MaxNameLen},
		"description": maxLen(validate.MaxDescriptionLen),
	},
	"WorkspaceUser": {
		"role":    oneOf(data.Roles...),
		"modules": {Items: &fieldRule{Enum: data.Modules}},
		"agent_ids": {Description: "The agents the member is limited to; [] means all. Read by a token limited to some agents: " +
			narrowedAgentIDs + " Only a token that sees every agent changes members, so such a list is never sent back."},
	},
	"WorkspaceUserAdd": {
		"id":        {MinLength: 1, Description: "Id of an existing user; required when email is absent."},
		"email":     {MaxLength: validate.MaxEmailLen, Format: "email", Description: "Email of an existing user, instead of id (not both)."},
		"role":      oneOf(data.Roles...).with(true, ""),
		"modules":   {MaxItems: len(data.Modules), UniqueItems: true, Items: &fieldRule{Enum: data.Modules}, Description: "All five when omitted."},
		"agent_ids": {MaxItems: validate.MaxIDListItems, UniqueItems: true, Description: "Agents of the workspace the user is limited to; [] (the default) means all."},
	},
	"WorkspaceUserUpdate": {
		"role":      oneOf(data.Roles...),
		"modules":   {MaxItems: len(data.Modules), UniqueItems: true, Items: &fieldRule{Enum: data.Modules}},
		"agent_ids": {MaxItems: validate.MaxIDListItems, UniqueItems: true},
	},

	// Background jobs (service/jobs.go; docs/jobs.md).
	"Job": {
		"kind":         {Description: "What the job does: <feature>.<work>, e.g. knowledge_base.fetch_url."},
		"status":       oneOf(data.JobStatuses...).with(false, "queued (waiting, or waiting for a retry: see attempt and last_error), running, then succeeded, failed or canceled."),
		"attempt":      {Description: "Runs started so far; 0 until the first."},
		"max_attempts": {Description: "Runs allowed before the job fails."},
		"last_error":   {Description: "Why the latest failed run failed; kept when a later run succeeds."},
		"run_at":       {Description: "When the job is (or was) due: when queued, or when its retry is."},
		"started_at":   {Description: "When its first run started."},
		"agent_id":     {Description: "The agent the job works for, when it works for one."},
	},
	"JobProgress": {
		"done":  {Description: "Units done (test cases, calls, chunks...), as the job last reported."},
		"total": {Description: "Units in all; 0 until the job knows."},
	},
	// Numbers and calls (validate/number.go, validate/call.go).
	"Number": {"provider": oneOf(data.NumberProviders...),
		"inbound_agent_id":  {Description: hiddenAgentRead},
		"outbound_agent_id": {Description: hiddenAgentRead}},
	"NumberCreate": {
		"phone_number": fieldRule{Pattern: e164Pattern}.with(true, "E.164; registered once across the instance."),
		"nickname":     maxLen(validate.MaxNicknameLen),
		"provider":     oneOf(data.NumberProviders...).with(true, ""),
	},
	"NumberUpdate": {
		"nickname":          maxLen(validate.MaxNicknameLen),
		"provider":          oneOf(data.NumberProviders...),
		"inbound_agent_id":  {Description: "null unbinds the agent."},
		"outbound_agent_id": {Description: "null unbinds the agent."},
	},
	"Call": {
		"direction":       oneOf(data.CallDirections...),
		"status":          oneOf(data.CallStatuses...),
		"analysis_source": oneOf(data.AnalysisRuntime, data.AnalysisLLM).with(false, "Where analysis came from; null while the call has none."),
		"analysis_error":  {Description: "Why the last post-call analysis failed; null once one succeeds."},
		"cost":            {Description: "usage priced under the workspace's price table when the usage was set; null without usage."},
	},
	"CallCreate": {
		"agent_id":             fieldRule{MinLength: 1}.with(true, "An agent of the workspace."),
		"agent_version":        atLeast(1),
		"direction":            oneOf(data.CallDirections...).with(true, ""),
		"from_number":          callNumberRule,
		"to_number":            callNumberRule,
		"status":               oneOf(data.CallStatuses...).with(false, "registered when omitted."),
		"duration_ms":          between(0, validate.MaxCallDurationMS),
		"disconnection_reason": fieldRule{MinLength: 1, MaxLength: validate.MaxReasonLen},
		"transcript":           transcriptRule,
		"recording_url":        recordingURLRule,
		"variables":            nestedObjectRule,
		"analysis":             nestedObjectRule,
		"metadata":             nestedObjectRule,
	},
	"CallUpdate": {
		"status":               oneOf(data.CallStatuses...).with(false, "Moves only forward; ended and failed are final (409 otherwise)."),
		"duration_ms":          between(0, validate.MaxCallDurationMS),
		"disconnection_reason": fieldRule{MinLength: 1, MaxLength: validate.MaxReasonLen},
		"transcript":           transcriptRule,
		"recording_url":        recordingURLRule,
		"variables":            nestedObjectRule,
		"analysis":             nestedObjectRule,
		"metadata":             nestedObjectRule,
	},
	"TranscriptItem": {
		"role":     oneOf(data.TranscriptRoles...).with(true, ""),
		"content":  maxLen(validate.MaxTranscriptContent),
		"start_ms": between(0, validate.MaxTranscriptStartMS),
	},
	"CallAnalytics": {"disconnection_reasons": {NotNull: true}},
	"Catalog": {
		"llm": {NotNull: true, Description: "Provider to models; internal and azure accept any model name."},
		"stt": {NotNull: true, Description: "Provider to models."},
		"tts": {NotNull: true, Description: "Provider to models."},
	},
	"Subscription": {
		"limits": {NotNull: true, Description: "null for a limit means unlimited. open_conversations is the bound in force: the plan's, else the server's " +
			"--max-open-conversations; null only when neither bounds."},
		"usage": {NotNull: true},
	},

	// Webhooks and events (validate/webhook.go).
	"Webhook": {"events": {Items: &fieldRule{Enum: webhookEventNames}}},
	"WebhookCreate": {
		"url":         fieldRule{MaxLength: validate.MaxWebhookURLLen, Format: "uri"}.with(true, "http or https; may not resolve to an internal address unless the operator allows it."),
		"events":      fieldRule{MinItems: 1, MaxItems: validate.MaxWebhookEvents, UniqueItems: true, Items: &fieldRule{Enum: webhookEventNames}}.with(true, "Event types, or [\"*\"] for all."),
		"description": maxLen(validate.MaxDescriptionLen),
		"enabled":     {Description: "true when omitted."},
	},
	"WebhookUpdate": {
		"url":         {MaxLength: validate.MaxWebhookURLLen, Format: "uri"},
		"events":      {MinItems: 1, MaxItems: validate.MaxWebhookEvents, UniqueItems: true, Items: &fieldRule{Enum: webhookEventNames}},
		"description": maxLen(validate.MaxDescriptionLen),
	},
	"WebhookReplay": {
		"from": fieldRule{}.with(true, "Inclusive."),
		"to":   fieldRule{}.with(true, "Exclusive; after from."),
	},
	"Delivery": {"status": oneOf(data.DeliveryPending, data.DeliverySucceeded, data.DeliveryFailed, data.DeliveryRetrying)},
	"Event":    {"type": oneOf(data.EventTypes...), "data": {Description: "The record the event is about."}},
	"Actor":    {"type": oneOf("user", "client", "system")},

	// Workspace export and import (validate/export.go).
	"WorkspaceExport": {
		"format":  fieldRule{Enum: []string{data.ExportFormat}}.with(true, ""),
		"version": between(data.ExportVersion, data.ExportVersion).with(true, "The document format's version."),
		"secrets": oneOf(data.ExportSecretsMasked, data.ExportSecretsIncluded).with(false, "Whether credentials are masked or in the clear."),
		"agents":  {MaxItems: validate.MaxImportItems},
		"numbers": {MaxItems: validate.MaxImportItems},
		"suppressions": fieldRule{MaxItems: validate.MaxSuppressions}.with(false,
			fmt.Sprintf("The do-not-call list, oldest first; an import adds its numbers to the target's list (a number listed already is kept as it is), "+
				"422 naming suppressions, with nothing imported, when that would take the list past %d numbers. Absent: nothing added.", validate.MaxSuppressions)),
	},
	"ExportWorkspace": {
		"price_table": {Description: "The workspace's prices as PUT /api/v1/price-table takes them; an import sets the target's by that route's rules and records price_table.updated. Absent (a workspace that never set prices): the target's stays."},
		"embeddings":  {Description: "The knowledge bases' embedding provider (all null: the operator's default), its api_key masked or in the clear as secrets says. An import sets the target's from it, a masked api_key as null (named in missing_secrets), and embeds the target's knowledge bases again when the provider or model changes. Absent: the target's stays."},
	},
	"ExportSuppression": {
		"phone_number": fieldRule{}.with(true, "E.164; an import normalizes it as a suppression list import does."),
		"reason":       maxLen(validate.MaxSuppressionReason),
		"created_at":   {Description: "When the number was put on the list; an import keeps it (absent: the import's time)."},
	},
	"ExportFile": {
		"filename":       maxLen(validate.MaxFilename),
		"content_base64": {Format: "byte", Description: "The file's bytes in base64."},
	},

	// Knowledge bases (validate/knowledge_base.go).
	"KnowledgeBaseCreate": {
		"name":  fieldRule{MinLength: 1, MaxLength: validate.MaxNameLen}.with(true, ""),
		"texts": {Description: "Texts and urls together: at most 100 sources a request."},
		"urls":  {UniqueItems: true, Items: &fieldRule{MaxLength: validate.MaxURL, Format: "uri"}, Description: "http or https URLs, fetched in the background."},
	},
	"KnowledgeBaseUpdate": {"name": fieldRule{MinLength: 1, MaxLength: validate.MaxNameLen}},
	"SourcesAdd": {
		"texts": {Description: "Texts, urls and files together: at least one, at most 100 sources a request."},
		"urls":  {UniqueItems: true, Items: &fieldRule{MaxLength: validate.MaxURL, Format: "uri"}},
	},
	"TextInput": {
		"title":   maxLen(validate.MaxSourceTitle),
		"content": fieldRule{MinLength: 1, MaxLength: validate.MaxTextContent}.with(true, ""),
	},
	"KnowledgeQuery": {
		"query":                fieldRule{MinLength: 1, MaxLength: validate.MaxQuery}.with(true, ""),
		"chunks_to_retrieve":   between(validate.MinChunksToRetrieve, validate.MaxChunksToRetrieve),
		"similarity_threshold": between(validate.MinSimilarity, validate.MaxSimilarity).with(false, "null: no threshold."),
	},
	"AgentKnowledgeQuery": {"query": fieldRule{MinLength: 1, MaxLength: validate.MaxQuery}.with(true, "")},
	"KnowledgeChunk": {
		"score":       between(0, 1).with(false, "Similarity; higher is better. With embeddings, the blend of the lexical score and the cosine similarity (docs/knowledge-bases.md)."),
		"source_type": oneOf(data.SourceTypes...),
		"evidence":    oneOf(data.EvidenceLexical, data.EvidenceVector, data.EvidenceBoth).with(false, "What found the chunk: its words (lexical), its embedding's closeness to the query's (vector), or both."),
	},
	// Embedding provider of a workspace (validate/knowledge_base.go, docs/knowledge-bases.md).
	"WorkspaceEmbeddings":      workspaceEmbeddingsRules,
	"WorkspaceEmbeddingsPatch": workspaceEmbeddingsRules,
	"Access": {
		"write": {Description: "The caller may change and delete the record: its role, modules and key scopes allow it, and no agent outside its agent_ids would be acted for (a knowledge base: none uses it, and then its sources may be added, removed and refetched too; a number: none is bound to it nor dials from it in an open campaign). Each write is checked again when made."},
	},
	"NumberAccess": {
		"write": {Description: "The caller may change and delete the number: its role, modules and key scopes allow it, and no agent outside its agent_ids is bound to it nor dials from it in an open campaign. Each write is checked again when made."},
		"dial":  {Description: "The caller may start a campaign that dials from the number: its role, modules and key scopes allow a campaign's create (call_history write), and no agent outside its agent_ids is bound to it nor dials from it in an open campaign (the rule a campaign's number_id is refused by). The create is checked again when made."},
	},
	"KnowledgeEmbeddings": {
		"status": oneOf(data.EmbeddingsOff, data.EmbeddingsInProgress, data.EmbeddingsReady, data.EmbeddingsFailing),
		"error":  fieldRule{Description: "The last embedding failure; null once embedding succeeds."},
	},
	// Privacy settings (validate/privacy.go, docs/calls.md).
	"WorkspacePrivacy":      workspacePrivacyRules,
	"WorkspacePrivacyPatch": workspacePrivacyRules,
	"AgentPrivacy":          agentPrivacyRules,
	"AgentPrivacyPatch":     agentPrivacyRules,
	"Redaction": {
		"detectors": {UniqueItems: true, Items: &fieldRule{Enum: validate.RedactionDetectors}, Description: "Built-in detectors that are on; [] redacts nothing."},
		"rules":     {MaxItems: validate.MaxRedactionRules, Description: "Custom detectors, applied after the built-in ones."},
	},
	"RedactionRule": {
		"name":    fieldRule{Pattern: redact.NamePattern, MaxLength: validate.MaxRedactionRuleName}.with(true, "The marker: a match becomes [name]. Not a built-in detector's name; unique in the setting."),
		"pattern": fieldRule{MinLength: 1, MaxLength: validate.MaxRedactionPatternBytes}.with(true, fmt.Sprintf("RE2 (Go regexp) syntax, compiling to at most %d instructions (and the setting's patterns to at most %d together), not matching the empty string.", validate.MaxRedactionProgramSize, validate.MaxRedactionRulesProgram)),
	},
	"URLSource":  {"status": oneOf(data.SourcePending, data.SourceIndexed, data.SourceFailed)},
	"FileSource": {"status": oneOf(data.SourcePending, data.SourceIndexed, data.SourceFailed)},
}

var (
	retentionRule = between(validate.MinRetentionDays, validate.MaxRetentionDays)

	workspacePrivacyRules = map[string]fieldRule{
		"retention_days":           retentionRule.with(false, "Days a call is kept after it is created; null keeps calls forever. An agent's own retention_days replaces it for that agent's calls; a call on legal_hold is kept."),
		"knowledge_retention_days": retentionRule.with(false, "Days a knowledge base file is kept after its upload; null keeps files forever. Texts and URLs are not affected."),
		"redaction":                {Description: "Applied to every call's transcript, variables and analysis before they are stored; an agent's redaction adds to it."},
	}
	priceRules = map[string]fieldRule{
		"provider": fieldRule{MinLength: 1, MaxLength: validate.MaxIdentifier}.with(true, ""),
		"model":    fieldRule{MinLength: 1, MaxLength: validate.MaxIdentifier}.with(true, "A model, or * for any model of the provider without a price of its own."),
		"unit":     oneOf(data.PriceUnits...).with(true, "What the price pays for: a million tokens or characters, or a minute."),
		"price":    fieldRule{Pattern: `^\d{1,7}(\.\d{1,6})?$`}.with(true, "In the table's currency; 0 to 1000000."),
	}
	agentPrivacyRules = map[string]fieldRule{
		"retention_days": retentionRule.with(false, "Days this agent's calls are kept; replaces the workspace's retention_days; null follows the workspace."),
		"redaction":      {Description: "Added to the workspace's redaction for this agent's calls (it cannot remove any of it)."},
	}
)

// typeDocs describe the component schemas.
var typeDocs = map[string]string{
	"WorkspaceExport": "A whole workspace as one JSON document, for moving between instances and config as code (conventions §17).",
	"ImportResult":    "What an import created: the new ids by the document's keys.",
	"KnowledgeBase":   "A knowledge base and its text, url and file sources (conventions §8).",
	"Access":          "What the caller may do with the record answered beside it: the caller's, not the record's, so the ETag, events and exports leave it out.",
	"NumberAccess":    "What the caller may do with the number answered beside it (or, beside a list, with each number, by id): the caller's, not the number's, so the ETag, events and exports leave it out.",
	"Agent":           "A voice agent: its configuration groups and publication state (conventions §7).",
	"AgentCreate":     "Body of an agent create: name, and any group to merge into its default.",
	"AgentUpdate":     "Body of an agent update: each given group is merged into the stored one field by field; a change of provider drops the old provider's fields.",
	"AgentVersion":    "A published snapshot of an agent.",
	"APIKey":          "An API key (personal access token); the token itself is shown once, top-level.",
	"Call":            "A call of the call history (conventions §12).",
	"CallAnalytics":   "Call counts and durations over a range, by hour or day.",
	"Catalog":         "Models valid per provider, by kind (llm, stt, tts).",
	"Change":          "One changed field of a version diff, as a dot path.",
	"Delivery":        "One attempt to deliver an event to a webhook.",
	"Event":           "An event of the audit log and of webhooks (conventions §11).",
	"Page":            "Pagination meta of a list response.",
	"Subscription":    "The workspace's plan, limits and usage.",
	"Webhook":         "A webhook subscription; its signing secret is shown only on create and rotate.",
	"WorkspaceUser":   "A user's membership of a workspace.",
	"Redaction":       "A redaction setting: built-in detectors and custom RE2 rules; each match becomes a typed marker such as [card] (docs/calls.md).",
}

// workspaceEmbeddingsRules are the bounds of a workspace's embedding provider.
var workspaceEmbeddingsRules = map[string]fieldRule{
	"base_url": fieldRule{MaxLength: validate.MaxURL, Format: "uri"}.with(false, "OpenAI-compatible API root (POST {base_url}/embeddings); null with model null: the operator's default provider. Through the SSRF guard."),
	"model":    fieldRule{MinLength: 1, MaxLength: validate.MaxEmbeddingModel}.with(false, "Embedding model name; set together with base_url."),
	"api_key":  fieldRule{MaxLength: validate.MaxEmbeddingAPIKey}.with(false, "Bearer token; shown masked, the masked value sent back keeps it unless base_url moves to another origin (then it must be given again), null clears it."),
	"vector_share": between(validate.MinVectorShare, validate.MaxVectorShare).with(false,
		"The vector side's share of every knowledge query's hybrid score (1 − share is the words'); 0: vectors do not count, 1: only they do; null: the default, 0.5."),
	"enabled": fieldRule{NotNull: true}.with(false,
		"false: the workspace uses no embedding provider, neither its own nor the operator's default; its queries are lexical and its stored vectors wait unused. true again embeds what lacks vectors of the current model."),
}

// apiKeyRules are the rules of a key record, alone or with its user (an api_key.* event).
var apiKeyRules = map[string]fieldRule{
	"scopes":    {Nullable: true, Description: "The key's scopes; null for a key with its user's full rights."},
	"agent_ids": {Description: "The agents the key is narrowed to; [] means no narrowing. Another key's, in GET /api-keys, read by a token limited to some agents: " + narrowedAgentIDs},
}

// hiddenAgentRead says how a token limited to some agents reads a number's binding to
// another (service visibility.numberShown).
const hiddenAgentRead = "The agent, null for none. A token limited to some agents reads \"" + data.HiddenAgent +
	"\" for an agent outside them: bound, to an agent it may not know (docs/numbers.md)."

// narrowedAgentIDs says how a token limited to some agents reads another's agent_ids
// (service visibility.memberAgents), for the schemas that carry them.
const narrowedAgentIDs = "only the agents it sees; a list of none of them reads as [\"" +
	data.NoAgent + "\"] (no agent it may see), never as [] (docs/api.md)."
