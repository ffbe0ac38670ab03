package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/client"
)

// A custom function's credential header, which the server shows only masked: apply then
// plan shows no change, the header's value is never printed, and a file pulled from the
// server (the header masked in it) applies back keeping the stored value.
func TestCredentialHeadersRoundTrip(t *testing.T) {
	s := newIACServer(t)
	ctx := context.Background()
	const token = "crm-token-abcdefgh5678"
	t.Setenv("IAC_CRM_TOKEN", token)
	dir := writeFiles(t, map[string]string{"a.yaml": `agents:
  - name: CRM
    llm_config:
      tools:
        - name: lookup
          type: custom_function
          http_method: POST
          api_endpoint: https://crm.example.com/orders
          custom_function_headers: ["Authorization: Bearer ${env:IAC_CRM_TOKEN}", "X-Tenant: acme"]
`})
	out, err := s.cmd(t, "plan", "-f", dir)
	if ExitCode(err) != 2 || strings.Contains(out, "abcdefgh") {
		t.Fatalf("plan before apply: exit %d (%v), the value must not show\n%s", ExitCode(err), err, out)
	}
	if out, err := s.cmd(t, "apply", "-f", dir); err != nil || strings.Contains(out, "abcdefgh") {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if out, err := s.cmd(t, "plan", "-f", dir); ExitCode(err) != 0 || !strings.Contains(out, "No changes") {
		t.Fatalf("plan after apply: exit %d (%v), want no changes\n%s", ExitCode(err), err, out)
	}

	pulled := t.TempDir()
	if out, err := s.cmd(t, "pull", "-o", pulled); err != nil {
		t.Fatalf("pull: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(pulled, PullFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "abcdefgh") || !strings.Contains(string(raw), "Authorization: ****5678") {
		t.Fatalf("the pulled file does not hold the header masked:\n%s", raw)
	}
	edited := strings.Replace(string(raw), "X-Tenant: acme", "X-Tenant: beta", 1)
	if err := os.WriteFile(filepath.Join(pulled, PullFile), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := s.cmd(t, "apply", "-f", pulled); err != nil {
		t.Fatalf("apply of the pulled file: %v\n%s", err, out)
	}
	agents, err := client.Collect(s.c.Agents.All(ctx, client.AgentFilter{}))
	if err != nil || len(agents) != 1 {
		t.Fatalf("agents: %v %v", agents, err)
	}
	if got := agents[0].LLMConfig.Tools[0].CustomFunctionHeaders; len(got) != 2 || got[1] != "X-Tenant: beta" {
		t.Fatalf("the edit was not applied: %q", got)
	}
	// The stored value is the one first applied: an export with secrets shows it.
	req, _ := http.NewRequest("GET", s.url+"/api/v1/workspaces/"+agents[0].WorkspaceID+"/export?include_secrets=true", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	doc, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(doc), "Authorization: Bearer "+token) {
		t.Errorf("the stored header is not the applied value: %d %.2000s", res.StatusCode, doc)
	}
}
