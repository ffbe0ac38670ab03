package validate

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

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

// agentGroups are the configuration groups of an agent body, in the spec's order.
var agentGroups = []string{"call_config", "knowledge_base_config", "llm_config", "prompt_config", "stt_config", "tts_config"}

// readOnlyAgentFields are fields of the agent record a body may not set; naming them
// read-only tells a client that sent a record back what to drop.
var readOnlyAgentFields = map[string]bool{
	"id": true, "workspace_id": true, "status": true, "published_version": true,
	"created_at": true, "updated_at": true, "published_at": true,
}

// ApplyAgentBody merges a create or update body into base (the stored agent, or DefaultAgent for create)
// and returns the resulting agent and every fault found, under dot paths.
//
// base must hold the real, unmasked api_key, and is not modified; the result shares the
// groups the body does not give with it. Semantics (conventions
// §7): unknown or read-only fields are faults; name is required on create; a given group
// is merged field by field into base's group (null sets a nullable field to null, arrays
// are replaced whole); when a given llm_config, stt_config or tts_config names another
// provider, base's provider-tied fields are dropped first; an api_key equal to the mask of
// the stored key keeps the stored key. Then the name and every given group (every group
// on create) are checked against the rules. Groups not given are not checked again: a
// rename must not fail because the catalog has since dropped the stored model.
//
// The agent is returned even with faults, so a caller can add reference faults (see
// KnowledgeBaseRefs) before reporting them all at once.
func ApplyAgentBody(base *data.Agent, body map[string]json.RawMessage, creating bool, cat *data.Catalog) (*data.Agent, *Errors) {
	return applyAgentBody(base, body, creating, cat, mergeMembers)
}

func applyAgentBody(base *data.Agent, body map[string]json.RawMessage, creating bool, cat *data.Catalog, merge groupMerger) (*data.Agent, *Errors) {
	decodeErrs := &Errors{}
	// A shallow copy: every change below replaces a top-level field or a whole group of
	// out and never writes through a pointer or slice it shares with base, so base stays
	// as it was (the fuzz test checks it) without a deep copy, which encoded and decoded
	// the whole agent (a tenth of a PUT's CPU). Groups the body does not give are shared
	// with base, and so are the values behind pointers, slices and maps of a given group
	// that the group's members do not give (see mergeMembers); callers do not modify
	// either in place.
	c := *base
	out := &c
	given := map[string]bool{}
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		raw := body[k]
		switch {
		case k == "name":
			given[k] = true
			Strict(raw, &out.Name, k, decodeErrs)
		case slices.Contains(agentGroups, k):
			patch, ok := groupObject(raw, k, decodeErrs)
			if !ok {
				continue
			}
			given[k] = true
			mergeAgentGroup(out, k, patch, decodeErrs, merge)
		case readOnlyAgentFields[k]:
			decodeErrs.Addf(k, "The %s field is read-only.", k)
		default:
			decodeErrs.Addf(k, "The %s field is not a known field.", k)
		}
	}
	if creating && !given["name"] {
		decodeErrs.Required("name")
	}

	ruleErrs := &Errors{}
	if creating || given["name"] {
		validateAgentName(out.Name, ruleErrs)
	}
	checkGroups(out, cat, ruleErrs, func(group string) bool { return creating || given[group] })
	decodeErrs.addUncovered(ruleErrs)
	return out, decodeErrs
}

// ValidateAgent checks a whole agent against every rule, as create does; for records that
// arrive whole, such as an import.
func ValidateAgent(a *data.Agent, cat *data.Catalog, errs *Errors) {
	validateAgentName(a.Name, errs)
	checkGroups(a, cat, errs, func(string) bool { return true })
}

// ValidatePublish checks the body of a publish: description is optional, at most 1000
// characters.
func ValidatePublish(description *string, errs *Errors) {
	if description != nil {
		errs.MaxLen("description", *description, MaxPublishDescription)
	}
}

// KnowledgeBaseRefs reports each of ids that does not name an existing knowledge base of
// the workspace. Storage calls it inside its write transaction, with exists reading there,
// after ApplyAgentBody has checked the ids' format.
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
}

// groupObject returns a group's members, sorted by key; null or a non-object is a fault
// of the group.
func groupObject(raw json.RawMessage, path string, errs *Errors) (members, bool) {
	b := trim(raw)
	if string(b) == "null" {
		errs.Addf(path, "The %s field must not be null.", path)
		return members{}, false
	}
	ms, ok := scanObject(b, make([]member, 0, 16))
	if !ok {
		errs.Addf(path, "The %s field must be an object.", path)
		return members{}, false
	}
	return members{sortMembers(ms), raw}, true
}

// members are the members of a given group, sorted by key without duplicates, and the
// group's bytes, which hold them.
type members struct {
	list []member
	src  []byte
}

// get returns the member named key.
func (ms members) get(key string) (json.RawMessage, bool) {
	for _, m := range ms.list {
		if string(m.key) == key {
			return m.raw, true
		}
	}
	return nil, false
}

// mergeAgentGroup merges patch into a's group named group, in place.
func mergeAgentGroup(a *data.Agent, group string, patch members, errs *Errors, merge groupMerger) {
	switch group {
	case "call_config":
		a.CallConfig = mergeGroup(a.CallConfig, patch, group, errs, merge)
	case "knowledge_base_config":
		a.KnowledgeBaseConfig = mergeGroup(a.KnowledgeBaseConfig, patch, group, errs, merge)
	case "prompt_config":
		a.PromptConfig = mergeGroup(a.PromptConfig, patch, group, errs, merge)
	case "stt_config":
		stored := a.STTConfig
		if switchesProvider(patch, stored.Provider) {
			stored = data.STTConfig{Provider: stored.Provider} // model is tied to the provider
		}
		a.STTConfig = mergeGroup(stored, patch, group, errs, merge)
	case "tts_config":
		stored := a.TTSConfig
		if switchesProvider(patch, stored.Provider) {
			stored = data.TTSConfig{Provider: stored.Provider} // every other field is tied
		}
		a.TTSConfig = mergeGroup(stored, patch, group, errs, merge)
	case "llm_config":
		stored := a.LLMConfig
		switched := switchesProvider(patch, stored.Provider)
		if switched {
			stored = withoutLLMProviderFields(stored)
		}
		merged := mergeGroup(normalLLMConfig(stored), patch, group, errs, merge)
		keepMaskedAPIKey(&merged, a.LLMConfig.APIKey, patch, switched, errs)
		a.LLMConfig = merged
	}
}

// A groupMerger overlays patch on the group that dst (a pointer to a group) holds, member
// by member, and decodes the given members strictly, so faults of the patch are named
// under path. mergeMembers is the one ApplyAgentBody uses; a test holds it to the
// definition, Merge and StrictObject.
type groupMerger func(dst any, patch members, path string, errs *Errors)

// mergeMembers merges structurally: each given member's field is reset and decoded from
// the patch, the others keep the stored values. This equals encoding the stored group,
// overlaying the patch and decoding the result (Merge), which encoded every stored group
// and tool once more per update, as long as the stored group looks as decoding would
// leave it: arrays never nil (see normalLLMConfig).
func mergeMembers(dst any, patch members, path string, errs *Errors) {
	d := newDecoder(path, errs)
	d.src = patch.src
	v := reflect.ValueOf(dst).Elem()
	decodeMembers(d, patch.list, v, fieldsOf(v.Type()), true)
}

func mergeGroup[T any](stored T, patch members, path string, errs *Errors, merge groupMerger) T {
	out := stored
	merge(&out, patch, path, errs)
	return out
}

// normalLLMConfig returns c with nil arrays and a nil custom_sip_headers as empty ones,
// as a decode of its JSON encoding gives them. Stored tools needing it are copied, never
// changed in place.
func normalLLMConfig(c data.LLMConfig) data.LLMConfig {
	if c.KnowledgeBaseIDs == nil {
		c.KnowledgeBaseIDs = []string{}
	}
	if c.Tools == nil {
		c.Tools = []*data.Tool{}
	}
	var tools []*data.Tool
	for i, t := range c.Tools {
		if t == nil || !toolNeedsNormalizing(t) {
			continue
		}
		if tools == nil {
			tools = slices.Clone(c.Tools)
		}
		n := *t
		n.CustomSIPHeaders = orEmptyMap(n.CustomSIPHeaders)
		n.PhoneDirectory = orEmpty(n.PhoneDirectory)
		n.CustomFunctionHeaders = orEmpty(n.CustomFunctionHeaders)
		n.CustomFunctionQuery = orEmpty(n.CustomFunctionQuery)
		n.CustomFunctionVariables = orEmpty(n.CustomFunctionVariables)
		n.SpeakDuringExecutionOptions = orEmpty(n.SpeakDuringExecutionOptions)
		n.Variables = orEmpty(n.Variables)
		if slices.ContainsFunc(n.Variables, func(v data.ToolVariable) bool { return v.Choices == nil }) {
			n.Variables = slices.Clone(n.Variables)
			for j := range n.Variables {
				n.Variables[j].Choices = orEmpty(n.Variables[j].Choices)
			}
		}
		tools[i] = &n
	}
	if tools != nil {
		c.Tools = tools
	}
	return c
}

func toolNeedsNormalizing(t *data.Tool) bool {
	return t.CustomSIPHeaders == nil || t.PhoneDirectory == nil || t.CustomFunctionHeaders == nil ||
		t.CustomFunctionQuery == nil || t.CustomFunctionVariables == nil ||
		t.SpeakDuringExecutionOptions == nil || t.Variables == nil ||
		slices.ContainsFunc(t.Variables, func(v data.ToolVariable) bool { return v.Choices == nil })
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func orEmptyMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

// switchesProvider reports whether patch names a provider other than stored. A provider
// of the wrong type switches nothing: the decoder reports it.
func switchesProvider(patch members, stored string) bool {
	raw, ok := patch.get("provider")
	if !ok {
		return false
	}
	p, ok := unquote(raw)
	return ok && p != stored
}

// withoutLLMProviderFields clears the llm fields tied to the provider (conventions §7);
// temperature, knowledge_base_ids and tools carry over.
func withoutLLMProviderFields(c data.LLMConfig) data.LLMConfig {
	return data.LLMConfig{
		Provider:         c.Provider,
		Temperature:      c.Temperature,
		KnowledgeBaseIDs: c.KnowledgeBaseIDs,
		Tools:            c.Tools,
	}
}

// maskPrefix starts every masked secret; no real provider key starts with it.
const maskPrefix = "****"

// keepMaskedAPIKey puts the stored key back when the client sent its masked form, as
// responses show it (conventions §9). A masked value that matches no stored key (none
// stored, another key's mask, or a provider switch, which drops the stored key) is a
// fault: storing "****abcd" as a key would only fail later, at call time.
func keepMaskedAPIKey(c *data.LLMConfig, stored *string, patch members, switched bool, errs *Errors) {
	if _, given := patch.get("api_key"); !given || c.APIKey == nil || !strings.HasPrefix(*c.APIKey, maskPrefix) {
		return
	}
	if !switched && stored != nil && *c.APIKey == data.MaskSecret(*stored) {
		key := *stored
		c.APIKey = &key
		return
	}
	errs.Add("llm_config.api_key", "The llm_config.api_key field holds a masked value that matches no stored key; send the whole key.")
}

// addUncovered adds the faults of rules that are not on, or under, a path the decoder
// already faulted: "must be a number" needs no "is required" beside it.
func (e *Errors) addUncovered(rules *Errors) {
	for _, p := range rules.order {
		if e.covers(p) {
			continue
		}
		for _, msg := range rules.fields[p] {
			e.Add(p, msg)
		}
	}
}

func (e *Errors) covers(path string) bool {
	for _, p := range e.order {
		if path == p || strings.HasPrefix(path, p+".") {
			return true
		}
	}
	return false
}
