package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/validate"
)

func ruleList(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"name": fmt.Sprintf("r%d", i), "pattern": "x"}
	}
	return out
}

// programRules are five rules whose programs compile to total instructions together
// (a{n} compiles to n+2).
func programRules(total int) []map[string]any {
	out := make([]map[string]any, 5)
	for i := range out {
		n := total / 5
		if i == 4 {
			n = total - 4*(total/5)
		}
		out[i] = map[string]any{"name": fmt.Sprintf("r%d", i), "pattern": fmt.Sprintf("a{%d}", n-2)}
	}
	return out
}

// privacyCases are bodies of a privacy member at every bound and just past it; fault is
// the path (under privacy.) a 422 names, "" for a body that is accepted.
func privacyCases(workspace bool) []struct {
	name  string
	body  map[string]any
	fault string
} {
	red := func(r map[string]any) map[string]any { return map[string]any{"redaction": r} }
	cases := []struct {
		name  string
		body  map[string]any
		fault string
	}{
		{"retention at the minimum", map[string]any{"retention_days": validate.MinRetentionDays}, ""},
		{"retention under the minimum", map[string]any{"retention_days": validate.MinRetentionDays - 1}, "retention_days"},
		{"retention at the maximum", map[string]any{"retention_days": validate.MaxRetentionDays}, ""},
		{"retention over the maximum", map[string]any{"retention_days": validate.MaxRetentionDays + 1}, "retention_days"},
		{"retention negative", map[string]any{"retention_days": -1}, "retention_days"},
		{"retention null", map[string]any{"retention_days": nil}, ""},
		{"retention a string", map[string]any{"retention_days": "30"}, "retention_days"},
		{"retention fractional", map[string]any{"retention_days": 1.5}, "retention_days"},
		{"every detector", red(map[string]any{"detectors": validate.RedactionDetectors}), ""},
		{"unknown detector", red(map[string]any{"detectors": []string{"card", "passport"}}), "redaction.detectors.1"},
		{"detector twice", red(map[string]any{"detectors": []string{"email", "email"}}), "redaction.detectors.1"},
		{"rules at the limit", red(map[string]any{"rules": ruleList(validate.MaxRedactionRules)}), ""},
		{"rules over the limit", red(map[string]any{"rules": ruleList(validate.MaxRedactionRules + 1)}), "redaction.rules"},
		{"invalid regex", red(map[string]any{"rules": []map[string]any{{"name": "order_id", "pattern": "ORD-(\\d+"}}}), "redaction.rules.0.pattern"},
		{"look-ahead is not RE2", red(map[string]any{"rules": []map[string]any{{"name": "x", "pattern": "a(?=b)"}}}), "redaction.rules.0.pattern"},
		{"pattern at the size limit", red(map[string]any{"rules": []map[string]any{{"name": "x", "pattern": "[" + strings.Repeat("a", validate.MaxRedactionPatternBytes-2) + "]"}}}), ""},
		{"pattern over the size limit", red(map[string]any{"rules": []map[string]any{{"name": "x", "pattern": strings.Repeat("a", validate.MaxRedactionPatternBytes+1)}}}), "redaction.rules.0.pattern"},
		// a{n} compiles to n+2 instructions.
		{"program at the limit", red(map[string]any{"rules": []map[string]any{{"name": "x", "pattern": fmt.Sprintf("a{%d}", validate.MaxRedactionProgramSize-2)}}}), ""},
		{"program over the limit", red(map[string]any{"rules": []map[string]any{{"name": "x", "pattern": fmt.Sprintf("a{%d}", validate.MaxRedactionProgramSize-1)}}}), "redaction.rules.0.pattern"},
		{"rules' programs at the limit", red(map[string]any{"rules": programRules(validate.MaxRedactionRulesProgram)}), ""},
		{"rules' programs over the limit", red(map[string]any{"rules": programRules(validate.MaxRedactionRulesProgram + 1)}), "redaction.rules"},
		{"pattern matching empty", red(map[string]any{"rules": []map[string]any{{"name": "x", "pattern": "a*"}}}), "redaction.rules.0.pattern"},
		{"pattern empty", red(map[string]any{"rules": []map[string]any{{"name": "x", "pattern": ""}}}), "redaction.rules.0.pattern"},
		{"name at the limit", red(map[string]any{"rules": []map[string]any{{"name": "a" + strings.Repeat("b", validate.MaxRedactionRuleName-1), "pattern": "x"}}}), ""},
		{"name over the limit", red(map[string]any{"rules": []map[string]any{{"name": "a" + strings.Repeat("b", validate.MaxRedactionRuleName), "pattern": "x"}}}), "redaction.rules.0.name"},
		{"name of a detector", red(map[string]any{"rules": []map[string]any{{"name": "card", "pattern": "x"}}}), "redaction.rules.0.name"},
		{"name upper case", red(map[string]any{"rules": []map[string]any{{"name": "Order", "pattern": "x"}}}), "redaction.rules.0.name"},
		{"name twice", red(map[string]any{"rules": []map[string]any{{"name": "a", "pattern": "x"}, {"name": "a", "pattern": "y"}}}), "redaction.rules.1.name"},
		{"unknown member", map[string]any{"retention": 3}, "retention"},
	}
	if workspace {
		cases = append(cases,
			struct {
				name  string
				body  map[string]any
				fault string
			}{"knowledge retention over the maximum", map[string]any{"knowledge_retention_days": validate.MaxRetentionDays + 1}, "knowledge_retention_days"},
			struct {
				name  string
				body  map[string]any
				fault string
			}{"knowledge retention at the minimum", map[string]any{"knowledge_retention_days": validate.MinRetentionDays}, ""})
	} else {
		cases = append(cases, struct {
			name  string
			body  map[string]any
			fault string
		}{"knowledge retention is a workspace setting", map[string]any{"knowledge_retention_days": 5}, "knowledge_retention_days"})
	}
	return cases
}

// TestPrivacySettingsBounds sends each case to the workspace and to an agent: a bad body
// is a 422 naming its field and changes nothing stored; a good one is stored as sent.
func TestPrivacySettingsBounds(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	agent := e.do("POST", "/api/v1/agents", tok, map[string]any{"name": "A"})
	expect(t, agent, 201)
	targets := []struct {
		path      string
		workspace bool
	}{
		{"/api/v1/workspaces/" + e.Owner.WorkspaceID, true},
		{"/api/v1/agents/" + agent.Data()["id"].(string), false},
	}
	for _, target := range targets {
		for _, c := range privacyCases(target.workspace) {
			t.Run(fmt.Sprintf("%v/%s", target.workspace, c.name), func(t *testing.T) {
				before := e.do("GET", target.path, tok, nil)
				expect(t, before, 200)
				r := e.do("PUT", target.path, tok, map[string]any{"privacy": c.body})
				if c.fault != "" {
					expectFields(t, r, "privacy."+c.fault)
					after := e.do("GET", target.path, tok, nil)
					b1, _ := json.Marshal(before.Data()["privacy"])
					b2, _ := json.Marshal(after.Data()["privacy"])
					if string(b1) != string(b2) {
						t.Errorf("a refused body changed privacy from %s to %s", b1, b2)
					}
					return
				}
				expect(t, r, 200)
				got := r.Data()["privacy"].(map[string]any)
				for k, v := range c.body {
					want, _ := json.Marshal(v)
					have, _ := json.Marshal(got[k])
					if k == "redaction" {
						// the stored setting holds both lists, [] for one not sent
						var m map[string]any
						json.Unmarshal(want, &m)
						for _, l := range []string{"detectors", "rules"} {
							if m[l] == nil {
								m[l] = []any{}
							}
						}
						want, _ = json.Marshal(m)
					}
					if string(want) != string(have) {
						t.Errorf("%s stored as %s, sent %s", k, have, want)
					}
				}
			})
		}
	}
}

// TestLegalHoldAPI: legal_hold is set and cleared by the call update, shown on the call,
// refused when not a boolean, and a held call cannot be deleted.
func TestLegalHoldAPI(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	agent := e.do("POST", "/api/v1/agents", tok, map[string]any{"name": "A"})
	expect(t, agent, 201)
	c := e.do("POST", "/api/v1/calls", tok, map[string]any{"agent_id": agent.Data()["id"], "direction": "web"})
	expect(t, c, 201)
	if c.Data()["legal_hold"] != false {
		t.Fatalf("a new call's legal_hold = %v", c.Data()["legal_hold"])
	}
	path := "/api/v1/calls/" + c.Data()["id"].(string)
	for _, bad := range []any{"yes", 1, nil} {
		expectFields(t, e.do("PUT", path, tok, map[string]any{"legal_hold": bad}), "legal_hold")
	}
	r := e.do("PUT", path, tok, map[string]any{"legal_hold": true})
	expect(t, r, 200)
	if r.Data()["legal_hold"] != true {
		t.Fatalf("legal_hold after the update = %v", r.Data()["legal_hold"])
	}
	expect(t, e.do("DELETE", path, tok, nil), 409)
	expect(t, e.do("PUT", path, tok, map[string]any{"legal_hold": false}), 200)
	expect(t, e.do("DELETE", path, tok, nil), 204)
}
