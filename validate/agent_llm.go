package validate

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

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
	llmProvider(c, cat, p, errs)
	llmKnowledgeAndTools(c, p, errs)
}

// llmProvider checks the provider members of c (provider to max_tokens) under the path
// prefix p: an agent's llm_config, or a workspace's simulation setting.
func llmProvider(c data.LLMConfig, cat *data.Catalog, p string, errs *Errors) {
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
		errs.FloatBetween(p+"temperature", *c.Temperature, MinTemperature, MaxTemperature)
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
}

// llmKnowledgeAndTools checks llm_config's knowledge_base_ids and tools under p.
func llmKnowledgeAndTools(c data.LLMConfig, p string, errs *Errors) {
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
		tp := func() string { return Index(p+"tools", i) }
		validateTool(t, tp, errs)
		if first, dup := names[t.Name]; dup && t.Name != "" {
			errs.Addf(tp()+".name", "The %s.name field must be unique: %s has the same name.", tp(), Index(p+"tools", first))
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
		errs.NotBlankWhen(path, v, onProvider)
	case !mine && v != "":
		errs.Prohibited(path, notMine)
	default:
		errs.MaxLen(path, v, max)
	}
}

// validateTool: the Tool object table, for the item at path. Fields the spec marks as
// used by one type are accepted on others and stored unused: the spec refuses only what
// its rules name.
//
// A rule here builds its field's path only when the field fails it (the at helpers
// below): with 20 tools, joining some 30 paths per tool up front was a third of a body's
// allocations. Each helper checks first and then calls the Errors method it stands for,
// so the messages are that method's.
func validateTool(t *data.Tool, path func() string, errs *Errors) {
	p := func() string { return path() + "." }
	isType := func() string { return p() + "type is " + t.Type }
	if strings.TrimSpace(t.Name) == "" {
		errs.NotBlank(p()+"name", t.Name)
	} else {
		if !validName(t.Name) {
			errs.Match(p()+"name", t.Name, nameRe, nameForm)
		}
		maxLenAt(errs, p, "name", t.Name, MaxToolName)
	}
	enumAt(errs, p, "type", t.Type, data.ToolTypes...)
	optMaxLenAt(errs, p, "description", t.Description, MaxToolDescription)
	optEnumAt(errs, p, "announcement_type", t.AnnouncementType, "static", "prompt")
	optMaxLenAt(errs, p, "announcement_message", t.AnnouncementMessage, MaxText)
	optMaxLenAt(errs, p, "announcement_prompt", t.AnnouncementPrompt, MaxText)
	optMaxLenAt(errs, p, "transfer_declined_message", t.TransferDeclinedMessage, MaxText)
	optMaxLenAt(errs, p, "hold_audio", t.HoldAudio, MaxHoldAudio)
	validateCustomSIPHeaders(t.CustomSIPHeaders, path, errs)
	// voicemail_detection: a nullable boolean; the decoder checks its type.
	optEnumAt(errs, p, "voicemail_response_action_type", t.VoicemailResponseActionType, "prompt", "hangup", "message")
	optMaxLenAt(errs, p, "voicemail_response_text", t.VoicemailResponseText, MaxText)
	if len(t.PhoneDirectory) == 0 && t.Type == data.ToolTransferCall {
		errs.RequiredWhen(p()+"phone_directory", isType())
	}
	for i, e := range t.PhoneDirectory {
		validatePhoneDirectoryEntry(e, func() string { return Index(p()+"phone_directory", i) }, errs)
	}
	if d := t.PauseDetectionDelayMS; d != nil && (*d < MinPauseDetectionMS || *d > MaxPauseDetectionMS) {
		errs.IntBetween(p()+"pause_detection_delay_ms", int64(*d), MinPauseDetectionMS, MaxPauseDetectionMS)
	}
	validateToolContent(t, path, errs)
	validateToolRequest(t, path, errs)
	// speak_during_execution, speak_after_execution: nullable booleans.
	itemsMaxLenAt(errs, p, "speak_during_execution_options", t.SpeakDuringExecutionOptions, MaxText)
	validateToolVariables(t, path, errs)
}

// validateCustomSIPHeaders checks the custom_sip_headers of the tool at path in name
// order, so the faults come in the same order on every run.
//
// validateTool's helpers take the tool's path and build p and isType themselves: a
// closure made in the function that calls it is inlined, so a field's path is still
// joined in one step (a p passed in would cost an allocation per eager path).
func validateCustomSIPHeaders(headers map[string]string, path func() string, errs *Errors) {
	if len(headers) == 0 {
		return
	}
	p := func() string { return path() + "." }
	names := make([]string, 0, len(headers))
	for h := range headers {
		names = append(names, h)
	}
	slices.Sort(names)
	for _, h := range names {
		hp := func() string { return p() + "custom_sip_headers." + h }
		if len(h) > MaxIdentifier || !validHeaderName(h) {
			errs.Addf(hp(), "The %s field is invalid: a header name is a token of at most %d characters.", hp(), MaxIdentifier)
		}
		if v := headers[h]; tooLong(v, MaxText) {
			errs.MaxLen(hp(), v, MaxText)
		}
	}
}

// validateToolContent checks the message a send_sms tool sends: content_type and content,
// both required for that type.
func validateToolContent(t *data.Tool, path func() string, errs *Errors) {
	p := func() string { return path() + "." }
	isType := func() string { return p() + "type is " + t.Type }
	sms := t.Type == data.ToolSendSMS
	if t.ContentType == "" {
		if sms {
			errs.RequiredWhen(p()+"content_type", isType())
		}
	} else if t.ContentType != "prompt" && t.ContentType != "static" {
		errs.OneOf(p()+"content_type", t.ContentType, "prompt", "static")
	}
	if strings.TrimSpace(t.Content) == "" && sms {
		errs.RequiredWhen(p()+"content", isType())
	}
	maxLenAt(errs, p, "content", t.Content, MaxText)
}

// validateToolRequest checks the HTTP request a custom function tool makes.
func validateToolRequest(t *data.Tool, path func() string, errs *Errors) {
	p := func() string { return path() + "." }
	if t.HTTPMethod != "" && !slices.Contains(httpMethods, t.HTTPMethod) {
		errs.OneOf(p()+"http_method", t.HTTPMethod, httpMethods...)
	}
	if t.APIEndpoint != "" {
		checkURL(errs, p()+"api_endpoint", t.APIEndpoint)
	}
	if t.Timeout != nil && *t.Timeout < 0 {
		errs.IntMin(p()+"timeout", int64(*t.Timeout), 0)
	}
	itemsMaxLenAt(errs, p, "custom_function_headers", t.CustomFunctionHeaders, MaxText)
	itemsMaxLenAt(errs, p, "custom_function_query", t.CustomFunctionQuery, MaxText)
	optMaxLenAt(errs, p, "custom_function_parameters", t.CustomFunctionParameters, MaxPrompt)
	itemsMaxLenAt(errs, p, "custom_function_variables", t.CustomFunctionVariables, MaxIdentifier)
}

// validateToolVariables checks the variables a tool extracts: required for
// extract_dynamic_variable, each valid, names unique.
func validateToolVariables(t *data.Tool, path func() string, errs *Errors) {
	p := func() string { return path() + "." }
	isType := func() string { return p() + "type is " + t.Type }
	if len(t.Variables) == 0 && t.Type == data.ToolExtractDynamicVariable {
		errs.RequiredWhen(p()+"variables", isType())
	}
	for i, v := range t.Variables {
		vp := func() string { return Index(p()+"variables", i) }
		validateToolVariable(v, vp, errs)
		// Two variables of one name would overwrite each other's extracted value.
		if v.Name == "" {
			continue
		}
		if first := slices.IndexFunc(t.Variables[:i], func(w data.ToolVariable) bool { return w.Name == v.Name }); first >= 0 {
			errs.Addf(vp()+".name", "The %s.name field must be unique: %s has the same name.", vp(), Index(p()+"variables", first))
		}
	}
}

var httpMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// validatePhoneDirectoryEntry: the phone_directory item table; all four fields required.
func validatePhoneDirectoryEntry(e data.PhoneDirectoryEntry, path func() string, errs *Errors) {
	p := func() string { return path() + "." }
	requiredStringAt(errs, p, "name", e.Name, MaxIdentifier)
	requiredStringAt(errs, p, "phone_number", e.PhoneNumber, MaxIdentifier)
	requiredStringAt(errs, p, "description", e.Description, MaxText)
	enumAt(errs, p, "transfer_type", e.TransferType, "warm", "cold")
}

// validateToolVariable: the variables item table; type, name and description required.
// choices are the values of an enum variable: required (non-empty) for type enum and
// refused for the other types, where they would mean nothing.
func validateToolVariable(v data.ToolVariable, path func() string, errs *Errors) {
	p := func() string { return path() + "." }
	enumAt(errs, p, "type", v.Type, "string", "number", "boolean", "enum")
	if strings.TrimSpace(v.Name) == "" {
		errs.NotBlank(p()+"name", v.Name)
	} else {
		if !validName(v.Name) {
			errs.Match(p()+"name", v.Name, nameRe, nameForm)
		}
		maxLenAt(errs, p, "name", v.Name, MaxIdentifier)
	}
	requiredStringAt(errs, p, "description", v.Description, MaxText)
	switch {
	case v.Type == "enum" && len(v.Choices) == 0:
		errs.RequiredWhen(p()+"choices", p()+"type is enum")
	case v.Type != "enum" && len(v.Choices) > 0:
		errs.Prohibited(p()+"choices", p()+"type is not enum")
	}
	for i, c := range v.Choices {
		if strings.TrimSpace(c) == "" || tooLong(c, MaxIdentifier) {
			cp := Index(p()+"choices", i)
			errs.NotBlank(cp, c)
			errs.MaxLen(cp, c, MaxIdentifier)
		}
	}
	if len(v.Choices) > 1 {
		noDuplicates(errs, p()+"choices", v.Choices)
	}
}

func requiredString(errs *Errors, path, v string, max int) {
	errs.NotBlank(path, v)
	errs.MaxLen(path, v, max)
}

// tooLong reports whether s has more than max characters, as MaxLen counts them.
func tooLong(s string, max int) bool {
	return len(s) > max && utf8.RuneCountInString(s) > max
}

// The at helpers check a field named name under the prefix p() (a path and a dot), and
// join the field's path only for a fault.

func maxLenAt(errs *Errors, p func() string, name, v string, max int) {
	if tooLong(v, max) {
		errs.MaxLen(p()+name, v, max)
	}
}

func optMaxLenAt(errs *Errors, p func() string, name string, v *string, max int) {
	if v != nil {
		maxLenAt(errs, p, name, *v, max)
	}
}

func itemsMaxLenAt(errs *Errors, p func() string, name string, items []string, max int) {
	for i, s := range items {
		if tooLong(s, max) {
			errs.MaxLen(Index(p()+name, i), s, max)
		}
	}
}

func requiredStringAt(errs *Errors, p func() string, name, v string, max int) {
	if strings.TrimSpace(v) == "" || tooLong(v, max) {
		requiredString(errs, p()+name, v, max)
	}
}

func enumAt(errs *Errors, p func() string, name, v string, allowed ...string) {
	if v == "" || !slices.Contains(allowed, v) {
		enum(errs, p()+name, v, allowed...)
	}
}

func optEnumAt(errs *Errors, p func() string, name string, v *string, allowed ...string) {
	if v != nil && !slices.Contains(allowed, *v) {
		errs.OneOf(p()+name, *v, allowed...)
	}
}

// validName reports whether s matches nameRe, ^[a-zA-Z_-][a-zA-Z0-9_-]*$, without the
// regexp engine (a test holds the two together).
func validName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validHeaderName reports whether s matches headerNameRe (an RFC 9110 token) without the
// regexp engine (a test holds the two together).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+.^_`|~-", c) >= 0) {
			return false
		}
	}
	return true
}
