package server_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestExportImportCarriesTests: a workspace export holds each agent's tests and the
// simulation setting (its key masked unless secrets are included); an import into another
// workspace makes the tests anew (new ids, the same members) and sets the setting, a
// masked key becoming null and named in missing_secrets; a test that breaks a rule fails
// the whole import, naming it, with nothing made.
func TestExportImportCarriesTests(t *testing.T) {
	e := newTestsEnv(t)
	agent := e.bookingAgent(t, "Trattoria")
	body := scripted("books", []string{"A table for two"}, everyCriterionMet...)
	body["required_for_publish"], body["repeat"] = true, 3
	made := e.createTest(t, agent, body)
	testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+e.Owner.WorkspaceID, e.tok,
		map[string]any{"simulation": map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "api_key": "gsk-simulation-key-9876"}}), 200)

	exp := e.Do("GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/export", e.tok, nil)
	testkit.Expect(t, exp, 200)
	var doc data.WorkspaceExport
	if err := json.Unmarshal(exp.Body, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Agents) != 1 || len(doc.Agents[0].Tests) != 1 || doc.Workspace.Simulation == nil ||
		*doc.Workspace.Simulation.APIKey != "****9876" || strings.Contains(string(exp.Body), "gsk-simulation-key") {
		t.Fatalf("export: %d agents, tests %v, simulation %+v", len(doc.Agents), doc.Agents[0].Tests, doc.Workspace.Simulation)
	}
	exported := doc.Agents[0].Tests[0]
	if exported.Name != "books" || exported.Repeat != 3 || !exported.RequiredForPublish || len(exported.Criteria) != len(everyCriterionMet) ||
		strings.Contains(string(mustJSON(exported)), made["id"].(string)) {
		t.Errorf("the exported test: %+v", exported)
	}

	other := e.Do("POST", "/api/v1/workspaces", e.tok, map[string]any{"name": "Copy"})
	testkit.Expect(t, other, 201)
	ws := other.Data()["id"].(string)
	tok := e.TokenIn(e.Owner, ws)
	imp := e.Do("POST", "/api/v1/workspaces/"+ws+"/import", tok, exp.Body)
	testkit.Expect(t, imp, 201)
	missing := imp.Data()["missing_secrets"].([]any)
	if !slices.Contains(missing, any("workspace.simulation.api_key")) {
		t.Errorf("missing_secrets: %v", missing)
	}
	newAgent := imp.Data()["agents"].([]any)[0].(map[string]any)["id"].(string)
	tests := e.Do("GET", "/api/v1/agents/"+newAgent+"/tests", tok, nil).List()
	if len(tests) != 1 {
		t.Fatalf("imported tests: %v", tests)
	}
	got := tests[0].(map[string]any)
	if got["id"] == made["id"] || got["agent_id"] != newAgent || got["workspace_id"] != ws || got["name"] != "books" || got["repeat"] != 3.0 ||
		!equalMembers(got, made, "user", "variables", "max_turns", "mocks", "criteria", "required_for_publish") {
		t.Errorf("the imported test:\n%v\nthe original:\n%v", got, made)
	}
	sim := e.Do("GET", "/api/v1/workspaces/"+ws, tok, nil).Data()["simulation"].(map[string]any)
	if sim["provider"] != "groq" || sim["api_key"] != nil {
		t.Errorf("the imported simulation setting: %v", sim)
	}

	// With secrets, the key travels and is sealed again where it lands.
	exp = e.Do("GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/export?include_secrets=true", e.tok, nil)
	third := e.Do("POST", "/api/v1/workspaces", e.tok, map[string]any{"name": "Third"})
	ws3 := third.Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/workspaces/"+ws3+"/import", e.TokenIn(e.Owner, ws3), exp.Body), 201)
	if s := e.Do("GET", "/api/v1/workspaces/"+ws3, e.TokenIn(e.Owner, ws3), nil).Data()["simulation"].(map[string]any); s["api_key"] != "****9876" {
		t.Errorf("the key imported with secrets: %v", s["api_key"])
	}

	// A broken test refuses the whole import.
	doc.Agents[0].Tests[0].Criteria[2] = data.Criterion{Type: data.CriterionSays, Pattern: "(unclosed"}
	doc.Agents[0].Tests = append(doc.Agents[0].Tests, doc.Agents[0].Tests[0])
	fourth := e.Do("POST", "/api/v1/workspaces", e.tok, map[string]any{"name": "Fourth"})
	ws4 := fourth.Data()["id"].(string)
	tok4 := e.TokenIn(e.Owner, ws4)
	testkit.ExpectFields(t, e.Do("POST", "/api/v1/workspaces/"+ws4+"/import", tok4, mustJSON(doc)),
		"agents.0.tests.0.criteria.2.pattern", "agents.0.tests.1.criteria.2.pattern", "agents.0.tests.1.name")
	if l := e.Do("GET", "/api/v1/agents", tok4, nil).List(); len(l) != 0 {
		t.Errorf("a refused import made %d agents", len(l))
	}
}

// equalMembers compares members of two decoded records by their JSON.
func equalMembers(a, b map[string]any, members ...string) bool {
	for _, m := range members {
		if string(mustJSON(a[m])) != string(mustJSON(b[m])) {
			return false
		}
	}
	return true
}
