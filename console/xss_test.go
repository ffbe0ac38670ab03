package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// TestLifeCycleTextIsEscaped: what members and callers write (an agent's name, a test's
// name, a call's transcript) is rendered as text on the life-cycle pages, never as markup:
// the payload shows escaped and never raw.
func TestLifeCycleTextIsEscaped(t *testing.T) {
	e := testenv.Start(t)
	const payload = `<script>alert("xss")</script><img src=x onerror=alert(1)>`
	tok := e.Owner.Token
	api := func(method, path string, body any, status int) map[string]any {
		t.Helper()
		r := e.Do(nil, method, path, tok, body)
		if r.Status != status {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		d, _ := r.JSON()["data"].(map[string]any)
		return d
	}
	agent := api("POST", "/api/v1/agents", map[string]any{"name": payload}, http.StatusCreated)["id"].(string)
	api("POST", "/api/v1/agents/"+agent+"/tests", map[string]any{"name": payload,
		"user": map[string]any{"script": []string{payload}}, "criteria": []any{map[string]any{"type": "says", "pattern": "x"}}}, http.StatusCreated)
	call := api("POST", "/api/v1/calls", map[string]any{"agent_id": agent, "direction": "web", "status": "ended",
		"transcript": []any{map[string]any{"role": "user", "content": payload, "start_ms": 0}}}, http.StatusCreated)["id"].(string)

	s := e.SignIn(e.Owner, e.Owner.WorkspaceID)
	for _, page := range []string{"/agents", "/agents/" + agent, "/agents/" + agent + "/tests", "/calls", "/calls/" + call} {
		r := e.Do(s.Client, "GET", page, "", nil)
		body := string(r.Body)
		if r.Status != http.StatusOK {
			t.Errorf("%s: %d", page, r.Status)
			continue
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s renders the payload as markup", page)
		}
		if !strings.Contains(body, "&lt;script&gt;alert") {
			t.Errorf("%s does not show the payload as text", page)
		}
	}
}
