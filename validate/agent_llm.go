package validate

import (
	"regexp"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// nameRe is the spec's form of a tool name and of a variable name.
var nameRe = regexp.MustCompile(`^[a-zA-Z_-][a-zA-Z0-9_-]*$`)

const nameForm = "letters, digits, _ and -, not starting with a digit"

// regionRe is an AWS region such as us-east-1, eu-central-2 or us-gov-west-1.
var regionRe = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)

// headerNameRe is an HTTP/SIP header field name (an RFC 9110 token).
var headerNameRe = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// validateLLMConfig: the llm_config table.
func validateLLMConfig(c data.LLMConfig, cat *data.Catalog, errs *Errors) {
	const p = "llm_config."
	enum(errs, p+"provider", c.Provider, data.LLMProviders...)
	azure, internal, bedrock := c.Provider == data.LLMAzure, c.Provider == data.LLMInternal, c.Provider == data.LLMBedrockClaude
	onProvider := p + "provider is " + c.Provider
	notOn := func(provider string) string { return p + "provider is not " + provider }

	// model: valid for the provider; optional for azure, whose deployment names the model.
	if !(azure && c.Model == "") {
		model(errs, p, data.KindLLM, c.Provider, c.Model, cat)
	}
	// temperature: 0 to 1; required for bedrock_claude and internal.
	if c.Temperature == nil {
		if bedrock || internal {
			errs.RequiredWhen(p+"temperature", onProvider)
		}
	} else {
		errs.FloatBetween(p+"temperature", *c.Temperature, 0, 1)
	}
	// deployment, endpoint, api_version: azure's, required there and refused elsewhere.
	providerString(errs, p+"deployment", c.Deployment, azure, onProvider, notOn(data.LLMAzure), MaxIdentifier)
	providerString(errs, p+"endpoint", c.Endpoint, azure, onProvider, notOn(data.LLMAzure), MaxURL)
	if c.Endpoint != "" && !errs.Has(p+"endpoint") {
		checkURL(errs, p+"endpoint", c.Endpoint)
	}
	providerString(errs, p+"api_version", c.APIVersion, azure, onProvider, notOn(data.LLMAzure), MaxIdentifier)
	// base_url: internal's (an OpenAI-compatible server), required there.
	providerString(errs, p+"base_url", c.BaseURL, internal, onProvider, notOn(data.LLMInternal), MaxURL)
	if c.BaseURL != "" && !errs.Has(p+"base_url") {
		checkURL(errs, p+"base_url", c.BaseURL)
	}
	// api_key: nullable; null means none (or the instance's own credentials).
	if c.APIKey != nil {
		if strings.TrimSpace(*c.APIKey) == "" {
			errs.Addf(p+"api_key", "The %sapi_key field must not be empty; send null to clear it.", p)
		}
		errs.MaxLen(p+"api_key", *c.APIKey, MaxSecret)
	}
	// region: bedrock_claude's, required there.
	providerString(errs, p+"region", c.Region, bedrock, onProvider, notOn(data.LLMBedrockClaude), MaxIdentifier)
	if c.Region != "" && !errs.Has(p+"region") {
		errs.Match(p+"region", c.Region, regionRe, "an AWS region such as us-east-1")
	}
	// max_tokens: required for bedrock_claude; any provider may cap its output.
	if c.MaxTokens == nil {
		if bedrock {
			errs.RequiredWhen(p+"max_tokens", onProvider)
		}
	} else {
		errs.IntMin(p+"max_tokens", int64(*c.MaxTokens), 1)
	}
	// knowledge_base_ids: well-formed ids, each once; existence is checked by storage
	// inside its transaction (KnowledgeBaseRefs).
	for i, id := range c.KnowledgeBaseIDs {
		if !data.ValidID(data.PrefixKnowledgeBase, id) {
			ip := Index(p+"knowledge_base_ids", i)
			errs.Addf(ip, "The selected %s is invalid: not a knowledge base id.", ip)
		}
	}
	noDuplicates(errs, p+"knowledge_base_ids", c.KnowledgeBaseIDs)
	// tools: items may be null; names are unique within the agent (conventions §7).
	names := map[string]int{}
	for i, t := range c.Tools {
		if t == nil {
			continue
		}
		tp := Index(p+"tools", i)
		validateTool(t, tp, errs)
		if first, dup := names[t.Name]; dup && t.Name != "" {
			errs.Addf(tp+".name", "The %s.name field must be unique: %s has the same name.", tp, Index(p+"tools", first))
		} else if !dup {
			names[t.Name] = i
		}
	}
}

// providerString checks a string field that belongs to one provider: required when
// mine, refused (when given) otherwise, bounded in length.
func providerString(errs *Errors, path, v string, mine bool, onProvider, notMine string, max int) {
	switch {
	case mine && strings.TrimSpace(v) == "":
		errs.RequiredWhen(path, onProvider)
	case !mine && v != "":
		errs.Prohibited(path, notMine)
	default:
		errs.MaxLen(path, v, max)
	}
}

// validateTool: the Tool object table, for the item at path. Fields the spec marks as
// used by one type are accepted on others and stored unused: the spec refuses only what
// its rules name.
func validateTool(t *data.Tool, path string, errs *Errors) {
	p := path + "."
	isType := p + "type is " + t.Type
	if strings.TrimSpace(t.Name) == "" {
		errs.Required(p + "name")
	} else {
		errs.Match(p+"name", t.Name, nameRe, nameForm)
		errs.MaxLen(p+"name", t.Name, MaxToolName)
	}
	enum(errs, p+"type", t.Type, data.ToolTypes...)
	optMaxLen(errs, p+"description", t.Description, MaxToolDescription)
	optEnum(errs, p+"announcement_type", t.AnnouncementType, "static", "prompt")
	optMaxLen(errs, p+"announcement_message", t.AnnouncementMessage, MaxText)
	optMaxLen(errs, p+"announcement_prompt", t.AnnouncementPrompt, MaxText)
	optMaxLen(errs, p+"transfer_declined_message", t.TransferDeclinedMessage, MaxText)
	optMaxLen(errs, p+"hold_audio", t.HoldAudio, MaxHoldAudio)
	headers := make([]string, 0, len(t.CustomSIPHeaders))
	for h := range t.CustomSIPHeaders {
		headers = append(headers, h)
	}
	slices.Sort(headers)
	for _, h := range headers {
		hp := p + "custom_sip_headers." + h
		if len(h) > MaxIdentifier || !headerNameRe.MatchString(h) {
			errs.Addf(hp, "The %s field is invalid: a header name is a token of at most %d characters.", hp, MaxIdentifier)
		}
		errs.MaxLen(hp, t.CustomSIPHeaders[h], MaxText)
	}
	// voicemail_detection: a nullable boolean; the decoder checks its type.
	optEnum(errs, p+"voicemail_response_action_type", t.VoicemailResponseActionType, "prompt", "hangup", "message")
	optMaxLen(errs, p+"voicemail_response_text", t.VoicemailResponseText, MaxText)
	if len(t.PhoneDirectory) == 0 && t.Type == data.ToolTransferCall {
		errs.RequiredWhen(p+"phone_directory", isType)
	}
	for i, e := range t.PhoneDirectory {
		validatePhoneDirectoryEntry(e, Index(p+"phone_directory", i), errs)
	}
	if t.PauseDetectionDelayMS != nil {
		errs.IntBetween(p+"pause_detection_delay_ms", int64(*t.PauseDetectionDelayMS), 1000, 6000)
	}
	sms := t.Type == data.ToolSendSMS
	if t.ContentType == "" {
		if sms {
			errs.RequiredWhen(p+"content_type", isType)
		}
	} else {
		errs.OneOf(p+"content_type", t.ContentType, "prompt", "static")
	}
	if strings.TrimSpace(t.Content) == "" && sms {
		errs.RequiredWhen(p+"content", isType)
	}
	errs.MaxLen(p+"content", t.Content, MaxText)
	if t.HTTPMethod != "" {
		errs.OneOf(p+"http_method", t.HTTPMethod, "GET", "POST", "PUT", "PATCH", "DELETE")
	}
	if t.APIEndpoint != "" {
		checkURL(errs, p+"api_endpoint", t.APIEndpoint)
	}
	if t.Timeout != nil {
		errs.IntMin(p+"timeout", int64(*t.Timeout), 0)
	}
	itemsMaxLen(errs, p+"custom_function_headers", t.CustomFunctionHeaders, MaxText)
	itemsMaxLen(errs, p+"custom_function_query", t.CustomFunctionQuery, MaxText)
	optMaxLen(errs, p+"custom_function_parameters", t.CustomFunctionParameters, MaxPrompt)
	itemsMaxLen(errs, p+"custom_function_variables", t.CustomFunctionVariables, MaxIdentifier)
	// speak_during_execution, speak_after_execution: nullable booleans.
	itemsMaxLen(errs, p+"speak_during_execution_options", t.SpeakDuringExecutionOptions, MaxText)
	if len(t.Variables) == 0 && t.Type == data.ToolExtractDynamicVariable {
		errs.RequiredWhen(p+"variables", isType)
	}
	varNames := map[string]int{}
	for i, v := range t.Variables {
		vp := Index(p+"variables", i)
		validateToolVariable(v, vp, errs)
		// Two variables of one name would overwrite each other's extracted value.
		if first, dup := varNames[v.Name]; dup && v.Name != "" {
			errs.Addf(vp+".name", "The %s.name field must be unique: %s has the same name.", vp, Index(p+"variables", first))
		} else if !dup {
			varNames[v.Name] = i
		}
	}
}

// validatePhoneDirectoryEntry: the phone_directory item table; all four fields required.
func validatePhoneDirectoryEntry(e data.PhoneDirectoryEntry, path string, errs *Errors) {
	p := path + "."
	requiredString(errs, p+"name", e.Name, MaxIdentifier)
	requiredString(errs, p+"phone_number", e.PhoneNumber, MaxIdentifier)
	requiredString(errs, p+"description", e.Description, MaxText)
	enum(errs, p+"transfer_type", e.TransferType, "warm", "cold")
}

// validateToolVariable: the variables item table; type, name and description required.
// choices are the values of an enum variable: required (non-empty) for type enum and
// refused for the other types, where they would mean nothing.
func validateToolVariable(v data.ToolVariable, path string, errs *Errors) {
	p := path + "."
	enum(errs, p+"type", v.Type, "string", "number", "boolean", "enum")
	if strings.TrimSpace(v.Name) == "" {
		errs.Required(p + "name")
	} else {
		errs.Match(p+"name", v.Name, nameRe, nameForm)
		errs.MaxLen(p+"name", v.Name, MaxIdentifier)
	}
	requiredString(errs, p+"description", v.Description, MaxText)
	switch {
	case v.Type == "enum" && len(v.Choices) == 0:
		errs.RequiredWhen(p+"choices", p+"type is enum")
	case v.Type != "enum" && len(v.Choices) > 0:
		errs.Prohibited(p+"choices", p+"type is not enum")
	}
	for i, c := range v.Choices {
		cp := Index(p+"choices", i)
		errs.NotBlank(cp, c)
		errs.MaxLen(cp, c, MaxIdentifier)
	}
	noDuplicates(errs, p+"choices", v.Choices)
}

func requiredString(errs *Errors, path, v string, max int) {
	errs.NotBlank(path, v)
	errs.MaxLen(path, v, max)
}

func optMaxLen(errs *Errors, path string, v *string, max int) {
	if v != nil {
		errs.MaxLen(path, *v, max)
	}
}

func itemsMaxLen(errs *Errors, path string, items []string, max int) {
	for i, s := range items {
		errs.MaxLen(Index(path, i), s, max)
	}
}
