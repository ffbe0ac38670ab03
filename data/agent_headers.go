package data

import (
	"slices"
	"strings"
)

// credentialHeaderNames are header names that carry a credential whatever they hold.
var credentialHeaderNames = []string{"authorization", "proxy-authorization", "cookie"}

// credentialHeaderWords are the words a header name that carries a credential contains
// (X-API-Key, X-Auth-Token, api_key, X-Webhook-Signature, X-Session-Id).
var credentialHeaderWords = []string{"key", "token", "secret", "auth", "password", "passwd", "signature", "session", "credential"}

// IsCredentialHeader reports whether item, a custom_function_headers "Name: value", carries
// a credential, judged by its name (before the first ":", trimmed, any case): such an
// item's value is sealed at rest and masked in every answer (conventions §9, extended in
// docs/agents.md). Other headers (Content-Type, Accept, X-Tenant) stay in the clear:
// masking them would hide what they do and protect nothing. An item without ":" is no
// header and no credential.
//
// netguard drops every header but four on a redirect to another origin; that list is
// for sending, where dropping a harmless header costs nothing, not for reading.
func IsCredentialHeader(item string) bool {
	name, _, ok := strings.Cut(item, ":")
	if !ok {
		return false
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return false
	}
	if slices.Contains(credentialHeaderNames, name) {
		return true
	}
	for _, w := range credentialHeaderWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// SplitHeader returns item's name and value, both trimmed, as the conversation engine
// sends them; ok is false when item has no ":".
func SplitHeader(item string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(item, ":")
	return strings.TrimSpace(name), strings.TrimSpace(value), ok
}

// MaskHeader returns item as answers show it: a credential header's value masked
// (MaskSecret) after its name, "Authorization: ****abcd"; any other item, and a
// credential header with an empty value (nothing to hide), as it is.
func MaskHeader(item string) string {
	if !IsCredentialHeader(item) {
		return item
	}
	name, value, _ := SplitHeader(item)
	if value == "" {
		return item
	}
	return name + ": " + MaskSecret(value)
}

// IsMaskedHeader reports whether item is a credential header whose value has the form of
// a masked secret: sent back, it stands for the stored value (KeepMaskedHeaders).
func IsMaskedHeader(item string) bool {
	_, value, _ := SplitHeader(item)
	return IsCredentialHeader(item) && IsMasked(value)
}

// MapCredentialHeaders returns c with fn applied to the value of each credential header
// of its tools, each changed tool a copy (c's tools are shared with the stored row and
// caches, so they are never changed in place). fn's error stops the walk.
func MapCredentialHeaders(c AgentConfig, fn func(value string) (string, error)) (AgentConfig, error) {
	var tools []*Tool
	for i, t := range c.LLMConfig.Tools {
		if t == nil {
			continue
		}
		var headers []string
		for j, item := range t.CustomFunctionHeaders {
			name, value, _ := SplitHeader(item)
			if !IsCredentialHeader(item) || value == "" {
				continue
			}
			next, err := fn(value)
			if err != nil {
				return c, err
			}
			if next == value {
				continue
			}
			if headers == nil {
				headers = slices.Clone(t.CustomFunctionHeaders)
			}
			headers[j] = name + ": " + next
		}
		if headers == nil {
			continue
		}
		if tools == nil {
			tools = slices.Clone(c.LLMConfig.Tools)
		}
		copied := *t
		copied.CustomFunctionHeaders = headers
		tools[i] = &copied
	}
	if tools != nil {
		c.LLMConfig.Tools = tools
	}
	return c, nil
}

// maskHeaders returns c with every credential header masked (MaskHeader).
func maskHeaders(c AgentConfig) AgentConfig {
	c, _ = MapCredentialHeaders(c, func(v string) (string, error) { return MaskSecret(v), nil })
	return c
}

// KeepMaskedHeaders returns tools with each credential header sent back masked replaced
// by the stored one it masks (conventions §9: the mask keeps the stored value). The
// stored counterpart is found in the stored tool of the same name, among its credential
// headers of the same name (any case): the n-th masked item of a name keeps the n-th
// stored one, when the mask is that value's (a renamed tool keeps nothing). An item with no counterpart stays masked
// (validate refuses it). Changed tools are copies; kept lists, for each tool index, the
// item indexes kept.
func KeepMaskedHeaders(tools, stored []*Tool) (out []*Tool, kept map[int][]int) {
	out = tools
	copiedList := false
	for i, t := range tools {
		if t == nil || !slices.ContainsFunc(t.CustomFunctionHeaders, IsMaskedHeader) {
			continue
		}
		var old *Tool
		for _, s := range stored {
			if s != nil && s.Name == t.Name {
				old = s
			}
		}
		if old == nil {
			continue
		}
		headers := slices.Clone(t.CustomFunctionHeaders)
		seen := map[string]int{} // masked items of a name met so far in t
		for j, item := range headers {
			if !IsMaskedHeader(item) {
				continue
			}
			name, value, _ := SplitHeader(item)
			n := seen[strings.ToLower(name)]
			seen[strings.ToLower(name)]++
			if s, ok := nthCredentialHeader(old.CustomFunctionHeaders, name, n); ok {
				if _, storedValue, _ := SplitHeader(s); MaskSecret(storedValue) == value {
					headers[j] = s
					if kept == nil {
						kept = map[int][]int{}
					}
					kept[i] = append(kept[i], j)
				}
			}
		}
		if len(kept[i]) == 0 {
			continue
		}
		if !copiedList {
			out, copiedList = slices.Clone(tools), true
		}
		copied := *t
		copied.CustomFunctionHeaders = headers
		out[i] = &copied
	}
	return out, kept
}

// nthCredentialHeader returns the n-th (from 0) credential item of headers named name.
func nthCredentialHeader(headers []string, name string, n int) (string, bool) {
	for _, item := range headers {
		if !IsCredentialHeader(item) {
			continue
		}
		if k, _, _ := SplitHeader(item); strings.EqualFold(k, name) {
			if n == 0 {
				return item, true
			}
			n--
		}
	}
	return "", false
}
