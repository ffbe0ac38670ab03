package server_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
)

// A custom function's credential headers are secrets (conventions §9, extended in
// docs/agents.md): no answer, version, diff, audit entry, export, log or the database
// file holds the value; the mask sent back keeps it, and the function still receives it;
// a mask of nothing stored, or kept while the api_endpoint moves to another origin, is
// 422 naming the item, and nothing is stored.
func TestCustomFunctionCredentialHeaders(t *testing.T) {
	const (
		bearer = "Bearer sk_live_abcdefgh1234"
		apiKey = "key-0000-secret-9876"
		leak   = "sk_live_abcdefgh"
	)
	var mu sync.Mutex
	var received []http.Header
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received = append(received, r.Header.Clone())
		mu.Unlock()
		w.Write([]byte(`{"status":"shipped"}`))
	}))
	defer fn.Close()
	e := newConvEnv(t, nil, func(s *cli.LLMSettings) { s.AllowURLPrefixes = append(s.AllowURLPrefixes, fn.URL+"/") })
	e.stand.Respond(func(r llmtest.Request) llmtest.Reply {
		if len(r.ToolResults()) > 0 {
			return llmtest.Text("Done.")
		}
		return llmtest.Calls(llm.ToolCall{ID: "call_1", Name: "lookup", Arguments: `{}`})
	})
	tool := func(endpoint string, headers ...string) map[string]any {
		return map[string]any{"name": "lookup", "type": "custom_function", "http_method": "POST",
			"api_endpoint": endpoint, "custom_function_headers": headers}
	}
	llmWith := func(t map[string]any) map[string]any { return e.llmConfig(map[string]any{"tools": []any{t}}) }
	endpoint := fn.URL + "/orders"

	var seen []string // every answer, to look for the value in
	do := func(method, path string, body any, status int) *testkit.Response {
		t.Helper()
		r := e.Do(method, path, e.tok, body)
		testkit.Expect(t, r, status)
		seen = append(seen, path+": "+string(r.Body))
		return r
	}
	headersOf := func(r *testkit.Response) []any {
		tools := r.Data()["llm_config"].(map[string]any)["tools"].([]any)
		return tools[0].(map[string]any)["custom_function_headers"].([]any)
	}
	masked := []any{"Authorization: ****1234", "X-Tenant: acme", "X-Api-Key: ****9876"}

	r := do("POST", "/api/v1/agents", map[string]any{"name": "CRM",
		"llm_config": llmWith(tool(endpoint, "Authorization: "+bearer, "X-Tenant: acme", "X-Api-Key: "+apiKey))}, 201)
	if got := headersOf(r); !jsonEqual(got, masked) {
		t.Errorf("create answers headers %v, want %v", got, masked)
	}
	agent := "/api/v1/agents/" + r.Data()["id"].(string)
	do("POST", agent+"/publish", nil, 204)
	if got := headersOf(do("GET", agent, nil, 200)); !jsonEqual(got, masked) {
		t.Errorf("show answers headers %v, want %v", got, masked)
	}

	// The mask sent back keeps the value (a description changes, so the update writes).
	kept := tool(endpoint, masked[0].(string), "X-Tenant: acme", masked[2].(string))
	kept["description"] = "Look an order up."
	if got := headersOf(do("PUT", agent, map[string]any{"llm_config": llmWith(kept)}, 200)); !jsonEqual(got, masked) {
		t.Errorf("update answers headers %v, want %v", got, masked)
	}
	do("GET", "/api/v1/agents", nil, 200)
	do("GET", agent+"/versions", nil, 200)
	do("GET", agent+"/versions/1", nil, 200)
	diff := do("GET", agent+"/versions/1/diff/current", nil, 200)
	if !strings.Contains(string(diff.Body), "description") {
		t.Errorf("the diff misses the change: %s", diff.Body)
	}
	// A header changed: the diff shows both values masked.
	changed := tool(endpoint, "Authorization: Bearer sk_live_other0000wxyz", "X-Tenant: acme", masked[2].(string))
	do("PUT", agent, map[string]any{"llm_config": llmWith(changed)}, 200)
	diff = do("GET", agent+"/versions/1/diff/current", nil, 200)
	if !strings.Contains(string(diff.Body), "Authorization: ****wxyz") || !strings.Contains(string(diff.Body), "Authorization: ****1234") {
		t.Errorf("the diff does not show the header's change masked: %s", diff.Body)
	}
	do("PUT", agent, map[string]any{"llm_config": llmWith(tool(endpoint, "Authorization: "+bearer, "X-Tenant: acme", masked[2].(string)))}, 200)

	// The function receives the real values.
	id := e.start(t, strings.TrimPrefix(agent, "/api/v1/agents/"), map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	do("POST", "/api/v1/conversations/"+id+"/messages", map[string]any{"content": "where is my order?"}, 200)
	mu.Lock()
	if len(received) != 1 || received[0].Get("Authorization") != bearer || received[0].Get("X-Api-Key") != apiKey || received[0].Get("X-Tenant") != "acme" {
		t.Errorf("the function received %v, want the stored values", received)
	}
	mu.Unlock()

	// Refused, nothing stored: a mask that matches no stored value, a masked header of a
	// name the tool does not have, a kept value following the tool to another origin.
	before := e.Do("GET", agent, e.tok, nil)
	for _, c := range []struct {
		name  string
		tool  map[string]any
		field string
	}{
		{"mask of another value", tool(endpoint, "Authorization: ****zzzz", "X-Tenant: acme"), "llm_config.tools.0.custom_function_headers.0"},
		{"no stored header of the name", tool(endpoint, "X-Tenant: acme", "X-Other-Token: ****9876"), "llm_config.tools.0.custom_function_headers.1"},
		{"a second masked item of one name", tool(endpoint, masked[0].(string), "authorization: ****1234"), "llm_config.tools.0.custom_function_headers.1"},
		{"another host", tool("https://attacker.example.net/orders", masked[0].(string)), "llm_config.tools.0.custom_function_headers.0"},
		{"another port", tool(strings.Replace(endpoint, "127.0.0.1:", "127.0.0.1:1", 1), "X-Tenant: acme", masked[2].(string)), "llm_config.tools.0.custom_function_headers.1"},
	} {
		r := e.Do("PUT", agent, e.tok, map[string]any{"llm_config": llmWith(c.tool)})
		testkit.ExpectFields(t, r, c.field)
		if after := e.Do("GET", agent, e.tok, nil); string(after.Body) != string(before.Body) {
			t.Errorf("%s: the refused update changed the agent", c.name)
		}
	}
	// The same origin (another path) keeps the value; given again, it may go anywhere.
	do("PUT", agent, map[string]any{"llm_config": llmWith(tool(endpoint+"/v2", masked[0].(string)))}, 200)
	do("PUT", agent, map[string]any{"llm_config": llmWith(tool("https://elsewhere.example.org/orders", "Authorization: "+bearer))}, 200)

	do("GET", "/api/v1/audit-log?per_page=100", nil, 200)
	exp := do("GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/export", nil, 200)
	if !strings.Contains(string(exp.Body), "Authorization: ****1234") {
		t.Errorf("the export does not hold the masked header: %s", exp.Body)
	}
	// Imported elsewhere, a masked header is no value: its name stays with an empty value,
	// named in missing_secrets, as a masked api_key becomes null.
	other := do("POST", "/api/v1/workspaces", map[string]any{"name": "Copy"}, 201).Data()["id"].(string)
	imp := e.Do("POST", "/api/v1/workspaces/"+other+"/import", e.TokenIn(e.Owner, other), exp.Body)
	testkit.Expect(t, imp, 201)
	if missing := imp.Data()["missing_secrets"].([]any); !slices.Contains(missing, any("agents.0.llm_config.tools.0.custom_function_headers.0")) {
		t.Errorf("missing_secrets: %v", missing)
	}
	copied := e.Do("GET", "/api/v1/agents/"+imp.Data()["agents"].([]any)[0].(map[string]any)["id"].(string), e.TokenIn(e.Owner, other), nil)
	if got := headersOf(copied); len(got) != 1 || got[0] != "Authorization:" {
		t.Errorf("the imported agent's headers: %v", got)
	}

	for _, text := range append(seen, "the server's log: "+e.Logs.String()) {
		if strings.Contains(text, leak) || strings.Contains(text, apiKey) {
			t.Errorf("holds a header's value in clear: %.300s", text)
		}
	}
	if testkit.OnPostgres() {
		return // the file below is bbolt's; the API above ran on PostgreSQL
	}
	if err := e.DB.Bolt().Sync(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(e.Dir, bolt.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), leak) || strings.Contains(string(raw), apiKey) {
		t.Error("the database file holds a header's value in clear")
	}
}
