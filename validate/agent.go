package validate

import (
	"github.com/voiceapi/voiceapi/data"
)

// Maximum lengths in characters. The first five are the spec's; the others are ours, so
// that every string has a documented bound (conventions §7). See docs/agents.md.
const (
	MaxAgentName          = 255 // spec
	MaxToolName           = 255 // spec
	MaxToolDescription    = 1024
	MaxHoldAudio          = 50   // spec
	MaxPublishDescription = 1000 // spec

	// MaxIdentifier bounds names and ids: model, deployment, api_version, region,
	// voice_id, speaker, SIP header names, phone directory names and numbers, variable
	// names and choices, custom_function_variables items.
	MaxIdentifier = 255
	// MaxURL bounds endpoint, base_url and api_endpoint.
	MaxURL = 2048
	// MaxSecret bounds llm_config.api_key (cloud tokens can be long).
	MaxSecret = 4096
	// MaxText bounds messages and descriptions without a spec maximum: announcement
	// messages and prompts, transfer_declined_message, voicemail_response_text, content,
	// welcome_message, phone directory and variable descriptions, SIP header values and the
	// items of custom_function_headers, custom_function_query and
	// speak_during_execution_options.
	MaxText = 5000
	// MaxPrompt bounds prompt_config.prompt and custom_function_parameters (a JSON schema).
	MaxPrompt = 100_000
)

// MaxVersionsPerAgent bounds the versions an agent holds: a publish past it is refused
// until old versions are deleted (docs/agents.md), and an import brings no more.
const MaxVersionsPerAgent = 1000

// AgentChange checks an agent a create or an update gave (merged: the body merged into
// the defaults or the stored agent) and returns every fault under its dot path: the name
// when created or given, every group on create and the given groups on update, and an
// api_key or custom function credential header given in its masked form that matched no
// stored value. Groups not given are not checked again: a rename must not fail because
// the catalog has since dropped the stored model. References to other records are
// checked by the caller (KnowledgeBaseRefs).
func AgentChange(merged *data.Agent, in *data.AgentUpdate, creating bool, cat *data.Catalog) *Errors {
	out := &Errors{}
	if l := in.LLMConfig; l.Set && l.V.APIKey.Set && merged.LLMConfig.APIKey != nil && data.IsMasked(*merged.LLMConfig.APIKey) {
		// A mask of the stored key was replaced by the key (data.LLMConfigPatch.Apply); any
		// other mask stored as a key would only fail later, at call time. This fault
		// stands in for the api_key's other rules.
		out.Add("llm_config.api_key", "The llm_config.api_key field holds a masked value that matches no stored key; send the whole key.")
	}
	if l := in.LLMConfig; l.Set && l.V.Tools.Set {
		maskedHeadersUnmatched(out, merged.LLMConfig.Tools)
	}
	rules := &Errors{}
	switch {
	case creating && !in.Name.Set:
		rules.Required("name")
	case creating || in.Name.Set:
		validateAgentName(merged.Name, rules)
	}
	checkGroups(merged, cat, rules, func(group string) bool { return creating || in.Given(group) })
	if in.Privacy.Set {
		AgentPrivacy(rules, "privacy", in.Privacy.V)
	}
	if in.MaxConcurrentCalls.Set {
		maxConcurrentCalls(rules, merged.MaxConcurrentCalls)
	}
	out.AddUncovered(rules)
	return out
}

// ValidateAgent checks a whole agent against every rule, as create does; for records that
// arrive whole, such as an import.
func ValidateAgent(a *data.Agent, cat *data.Catalog, errs *Errors) {
	validateAgentName(a.Name, errs)
	checkGroups(a, cat, errs, func(string) bool { return true })
	maxConcurrentCalls(errs, a.MaxConcurrentCalls)
}

// ValidatePublish checks the body of a publish: description is optional, at most 1000
// characters.
func ValidatePublish(description *string, errs *Errors) {
	if description != nil {
		errs.MaxLen("description", *description, MaxPublishDescription)
	}
}

// KnowledgeBaseRefs reports each of ids that does not name an existing knowledge base of
// the workspace. The service calls it inside its write transaction, with exists reading
// there, after AgentChange has checked the ids' format.
func KnowledgeBaseRefs(ids []string, exists func(id string) bool, errs *Errors) {
	for i, id := range ids {
		p := Index("llm_config.knowledge_base_ids", i)
		if !errs.Has(p) && !exists(id) {
			errs.Addf(p, "The selected %s is invalid: no such knowledge base.", p)
		}
	}
}

func checkGroups(a *data.Agent, cat *data.Catalog, errs *Errors, check func(group string) bool) {
	if check("call_config") {
		validateCallConfig(a.CallConfig, errs)
	}
	if check("knowledge_base_config") {
		validateKnowledgeBaseConfig(a.KnowledgeBaseConfig, errs)
	}
	if check("llm_config") {
		validateLLMConfig(a.LLMConfig, cat, errs)
	}
	if check("prompt_config") {
		validatePromptConfig(a.PromptConfig, errs)
	}
	if check("stt_config") {
		validateSTTConfig(a.STTConfig, cat, errs)
	}
	if check("tts_config") {
		validateTTSConfig(a.TTSConfig, cat, errs)
	}
	if check("analysis_config") {
		validateAnalysisConfig(a.AnalysisConfig, errs)
	}
}

// AddUncovered adds the faults of rules that are not on, or under, a path e already
// names: a field the decoder refused as "must be a number" needs no "is required" beside it.
func (e *Errors) AddUncovered(rules *Errors) {
	for _, p := range rules.Paths() {
		if e.covers(p) {
			continue
		}
		for _, msg := range rules.Messages(p) {
			e.Add(p, msg)
		}
	}
	e.Omit(rules.Omitted())
}

// covers: e names path or a path above it. It looks up path and each of its ancestors,
// not every path e names: a body of many unknown fields gives as many faults on each
// side, and comparing all with all took minutes inside a write transaction.
func (e *Errors) covers(path string) bool {
	if e.Has(path) {
		return true
	}
	for i := range len(path) {
		if path[i] == '.' {
			if e.Has(path[:i]) {
				return true
			}
		}
	}
	return false
}

// AgentFilter checks the agents list's filters: a known status, a name search no
// longer than a name, and a knowledge base's id.
func AgentFilter(f data.AgentFilter) error {
	var errs Errors
	if f.Status != "" {
		errs.OneOf("status", f.Status, data.AgentStatusDraft, data.AgentStatusPublished)
	}
	errs.MaxLen("name", f.Name, MaxAgentName)
	if f.KnowledgeBaseID != "" && !data.ValidID(data.PrefixKnowledgeBase, f.KnowledgeBaseID) {
		errs.Add("knowledge_base_id", "The knowledge_base_id parameter must be the id of a knowledge base.")
	}
	return errs.Err()
}

// maskedHeadersUnmatched adds a fault for each credential header of tools still masked
// once the stored values its mask stands for were put back (data.KeepMaskedHeaders): a
// mask of nothing stored would be sent as the credential.
func maskedHeadersUnmatched(errs *Errors, tools []*data.Tool) {
	for i, t := range tools {
		if t == nil {
			continue
		}
		for j, item := range t.CustomFunctionHeaders {
			if data.IsMaskedHeader(item) {
				path := Index(Index("llm_config.tools", i)+".custom_function_headers", j)
				errs.Addf(path, "The %s field holds a masked value that matches no stored header of this tool; send the whole value.", path)
			}
		}
	}
}
