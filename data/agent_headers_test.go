package data

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestIsCredentialHeader(t *testing.T) {
	for _, c := range []struct {
		item string
		want bool
	}{
		{"Authorization: Bearer x", true},
		{"authorization : Bearer x", true}, // any case, name trimmed
		{"  AUTHORIZATION:x", true},
		{"Proxy-Authorization: Basic x", true},
		{"Cookie: sid=1", true},
		{"X-Api-Key: k", true},
		{"api_key: k", true},
		{"X-Auth-Token: t", true},
		{"X-Webhook-Signature: s", true},
		{"X-Session: s", true},
		{"X-Client-Secret: s", true},
		{"X-Password: p", true},
		{"X-Passwd: p", true},
		{"X-Credential: c", true},
		{"Authorization:", true}, // empty value: still a credential header (nothing to mask)
		{"Authorization: a: b", true},
		{"Content-Type: application/json", false},
		{"Accept: */*", false},
		{"X-Tenant: acme", false},
		{"X-Tenant: token-looking-value", false}, // judged by name, not value
		{"Authorization Bearer x", false},        // no colon: no header
		{": Bearer x", false},                    // no name
		{"", false},
	} {
		if got := IsCredentialHeader(c.item); got != c.want {
			t.Errorf("IsCredentialHeader(%q) = %v, want %v", c.item, got, c.want)
		}
	}
}

func TestMaskHeader(t *testing.T) {
	for _, c := range []struct{ item, want string }{
		{"Authorization: Bearer sk_live_abcdefgh1234", "Authorization: ****1234"},
		{"x-api-key:key-0000-9876", "x-api-key: ****9876"},
		{"X-Api-Key: short", "X-Api-Key: ****"}, // under 8 characters: nothing shown
		{"Authorization:", "Authorization:"},    // nothing to hide
		{"Authorization:   ", "Authorization:   "},
		{"X-Tenant: acme", "X-Tenant: acme"},
		{"no colon token", "no colon token"},
	} {
		if got := MaskHeader(c.item); got != c.want {
			t.Errorf("MaskHeader(%q) = %q, want %q", c.item, got, c.want)
		}
	}
}

func TestKeepMaskedHeaders(t *testing.T) {
	stored := []*Tool{{Name: "crm", CustomFunctionHeaders: []string{
		"Authorization: Bearer first-secret-1111", "X-Tenant: acme", "X-Key: second-secret-2222", "x-key: third-secret-3333"}}}
	for _, c := range []struct {
		name  string
		tool  string
		given []string
		want  []string
	}{
		{"mask keeps", "crm", []string{"Authorization: ****1111", "X-Tenant: other"},
			[]string{"Authorization: Bearer first-secret-1111", "X-Tenant: other"}},
		{"name in another case", "crm", []string{"AUTHORIZATION: ****1111"}, []string{"Authorization: Bearer first-secret-1111"}},
		{"n-th masked keeps n-th stored", "crm", []string{"X-KEY: ****2222", "X-Key: new-value-9999", "x-key: ****3333"},
			[]string{"X-Key: second-secret-2222", "X-Key: new-value-9999", "x-key: third-secret-3333"}},
		{"the second masked of a name against the first stored", "crm", []string{"X-Key: ****3333"}, []string{"X-Key: ****3333"}},
		{"mask of another value stays", "crm", []string{"Authorization: ****9999"}, []string{"Authorization: ****9999"}},
		{"no stored header of the name", "crm", []string{"X-Token: ****1111"}, []string{"X-Token: ****1111"}},
		{"another tool keeps nothing", "other", []string{"Authorization: ****1111"}, []string{"Authorization: ****1111"}},
		{"a non-credential header is never kept", "crm", []string{"X-Tenant: ****acme"}, []string{"X-Tenant: ****acme"}},
	} {
		given := []*Tool{{Name: c.tool, CustomFunctionHeaders: slices.Clone(c.given)}}
		out, kept := KeepMaskedHeaders(given, stored)
		if !slices.Equal(out[0].CustomFunctionHeaders, c.want) {
			t.Errorf("%s: %q, want %q", c.name, out[0].CustomFunctionHeaders, c.want)
		}
		if !slices.Equal(given[0].CustomFunctionHeaders, c.given) {
			t.Errorf("%s: the given tool was changed in place", c.name)
		}
		for j, item := range c.want {
			if k := slices.Contains(kept[0], j); k != (item != c.given[j]) {
				t.Errorf("%s: kept %v, item %d", c.name, kept, j)
			}
		}
	}
}

// Masked shows credential headers masked, in agents and versions, without changing the
// tools it was given (shared with the stored row).
func TestMaskedHidesCredentialHeaders(t *testing.T) {
	tool := &Tool{Name: "crm", CustomFunctionHeaders: []string{"Authorization: Bearer sk_live_abcdefgh1234", "X-Tenant: acme"}}
	a := Agent{AgentConfig: AgentConfig{LLMConfig: LLMConfig{Tools: []*Tool{tool}}}}
	want := []string{"Authorization: ****1234", "X-Tenant: acme"}
	if got := a.Masked().LLMConfig.Tools[0].CustomFunctionHeaders; !slices.Equal(got, want) {
		t.Errorf("Agent.Masked: %q, want %q", got, want)
	}
	v := AgentVersion{AgentConfig: a.AgentConfig}
	if got := v.Masked().LLMConfig.Tools[0].CustomFunctionHeaders; !slices.Equal(got, want) {
		t.Errorf("AgentVersion.Masked: %q, want %q", got, want)
	}
	if tool.CustomFunctionHeaders[0] != "Authorization: Bearer sk_live_abcdefgh1234" {
		t.Error("Masked changed the tool it was given")
	}
}

// A diff shows a credential header masked, whether the item, the list or the whole tool
// changed.
func TestDiffMasksCredentialHeaders(t *testing.T) {
	snap := func(tools ...*Tool) AgentSnapshot {
		return AgentSnapshot{AgentConfig: AgentConfig{LLMConfig: LLMConfig{Tools: tools}}}
	}
	old := &Tool{Name: "crm", CustomFunctionHeaders: []string{"Authorization: Bearer sk_live_abcdefgh1234"}}
	changed := &Tool{Name: "crm", CustomFunctionHeaders: []string{"Authorization: Bearer sk_live_zzzzzzzz5678"}}
	for name, c := range map[string][2]AgentSnapshot{
		"item changed": {snap(old), snap(changed)},
		"tool added":   {snap(), snap(old)},
		"tool removed": {snap(old), snap()},
	} {
		changes := DiffAgentConfig(c[0], c[1])
		if len(changes) == 0 {
			t.Errorf("%s: no change", name)
		}
		for _, ch := range changes {
			text := toJSONString(ch)
			if strings.Contains(text, "sk_live") {
				t.Errorf("%s: %s shows the header's value", name, text)
			}
		}
	}
}

func toJSONString(c Change) string {
	b, _ := json.Marshal(c)
	return string(b)
}
