package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
)

// The first-hour examples of the docs, run as written against a real server: a reader
// copies these lines, and a jq path that misses the answer prints nulls without failing
// (conversations.md's end printed {"id": null, …}), a variable no block defines leaves
// every later line broken (runtime.md used $VOICEAPI and $RUNTIME_TOKEN unmade). Only the
// addresses change: the server's, and a model stand-in's in place of Ollama.

// docServer builds the binary and starts it on a fresh data directory with extra flags,
// returning its URL and the owner's token the first start printed.
func docServer(t *testing.T, extra ...string) (url, token string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the docs' examples need %s (CI=true: not skipping)", tool)
			}
			t.Skipf("the docs' examples need %s: not found", tool)
		}
	}
	tmp := t.TempDir()
	bin := voiceapiBinary(t)
	srv, stdout := startServer(t, bin, filepath.Join(tmp, "data"), extra...)
	return srv.url, bootstrapToken(t, stdout)
}

// docBlock is the first sh block of doc after heading (a regexp of the text before it)
// that starts with start.
func docBlock(t *testing.T, doc, heading, start string) string {
	t.Helper()
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)" + heading + ".*?```sh\n(" + regexp.QuoteMeta(start) + ".*?)```\n").FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatalf("%s has no sh block starting %q after %q", doc, start, heading)
	}
	return m[1]
}

// runBlocks runs scripts in one bash (set -e: a failing line stops it, as it would a
// reader) with env, the docs' addresses replaced by replace.
func runBlocks(t *testing.T, replace *strings.Replacer, env []string, scripts ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -eo pipefail\n"+replace.Replace(strings.Join(scripts, "\n")))
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the example failed: %v\n%s", err, out)
	}
	return out
}

func expectOutput(t *testing.T, out []byte, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !regexp.MustCompile(w).Match(out) {
			t.Errorf("the example's output lacks %s:\n%s", w, out)
		}
	}
}

// TestConversationsExampleRuns runs docs/conversations.md's working example.
func TestConversationsExampleRuns(t *testing.T) {
	model := llmtest.New(t, data.LLMInternal)
	model.Respond(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("Your bill is in your room.") })
	url, token := docServer(t, "--allow-url-prefix", model.URL+"/")
	script := docBlock(t, "docs/conversations.md", "## A working example with a local model\n", "API=")
	out := runBlocks(t, strings.NewReplacer("http://127.0.0.1:11434/v1", model.BaseURL(), "http://127.0.0.1:8080", url),
		[]string{"TOKEN=" + token}, script)
	expectOutput(t, out,
		`"role": "user",\s*"content": "I have a question about my bill"`,
		`"role": "agent",\s*"content": "Your bill is in your room."`,
		`event: done`,
		`"id": "call_\w+",\s*"direction": "web",\s*"disconnection_reason": "user_ended"`)
}

// TestRuntimeExampleRuns runs docs/runtime.md's key for the runtime, then its raw call
// start with that key, on a number routed to a published agent.
func TestRuntimeExampleRuns(t *testing.T) {
	url, token := docServer(t)
	do := func(method, path, body string, want int) map[string]any {
		t.Helper()
		status, b := call(t, method, url+path, token, body)
		if status != want {
			t.Fatalf("%s %s: %d %s", method, path, status, b)
		}
		return decodeData(t, b)
	}
	agent := do("POST", "/api/v1/agents", `{"name": "Front desk"}`, http.StatusCreated)["id"].(string)
	do("POST", "/api/v1/agents/"+agent+"/publish", "", http.StatusNoContent)
	do("POST", "/api/v1/numbers", `{"phone_number": "+14155550123", "provider": "sip", "inbound_agent_id": "`+agent+`"}`, http.StatusCreated)

	key := docBlock(t, "docs/runtime.md", "Give the runtime an API key", "VOICEAPI=")
	start := docBlock(t, "docs/runtime.md", "## The raw HTTP\n", "curl")
	report := docBlock(t, "docs/runtime.md", "## During and after the call\n", "# CALL")
	out := runBlocks(t, strings.NewReplacer("http://127.0.0.1:8080", url), []string{"TOKEN=" + token, "SIP_CALL_ID=7f3a9c@pbx"},
		key, `test -n "$RUNTIME_TOKEN" && test "$RUNTIME_TOKEN" != null`,
		"ANSWER=$("+start+")", `echo "$ANSWER"; CALL=$(jq -r .data.call.id <<<"$ANSWER"); echo "call: $CALL"`,
		report,
		// The key holds the runtime's scope only: a read of the call history is refused.
		`echo; curl -s -o /dev/null -w 'list: %{http_code}\n' $VOICEAPI/api/v1/calls -H "Authorization: Bearer $RUNTIME_TOKEN"`)
	expectOutput(t, out, `"status":"registered"`, `"agent_id":"`+agent+`"`, `"variant":\{"version":1,"weight":100,"rollout":false\}`, `list: 403`)

	// What the reports left on the call, read with the owner's token.
	callID := regexp.MustCompile(`call: (call_\w+)`).FindSubmatch(out)
	if callID == nil {
		t.Fatalf("no call id in the output:\n%s", out)
	}
	got := do("GET", "/api/v1/calls/"+string(callID[1]), "", http.StatusOK)
	transcript, _ := got["transcript"].([]any)
	analysis, _ := got["analysis"].(map[string]any)
	if got["status"] != "ended" || got["disconnection_reason"] != "user_hangup" || got["duration_ms"] != 95000.0 ||
		got["recording_url"] != "https://recordings.example.com/call.wav" || len(transcript) != 2 || analysis["call_successful"] != true {
		t.Errorf("the call after the documented reports: %v", got)
	}
}

// decodeData is the data member of an answer.
func decodeData(t *testing.T, body []byte) map[string]any {
	t.Helper()
	if len(body) == 0 {
		return nil
	}
	var v struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return v.Data
}

// TestTestingAgentsExampleRuns runs docs/testing-agents.md's worked example up to the
// publish its gate refuses (steps 1 to 3; the runs after need a model), and holds the
// refusal the page shows to the real one.
func TestTestingAgentsExampleRuns(t *testing.T) {
	url, token := docServer(t)
	agent := docBlock(t, "docs/testing-agents.md", `\*\*1\. The agent\*\*`, "export TOKEN=")
	tests := docBlock(t, "docs/testing-agents.md", `\*\*2\. Three tests\*\*`, "post()")
	publish := docBlock(t, "docs/testing-agents.md", `\*\*3\. Publish without a run:\*\*`, "curl")
	command, shown, _ := strings.Cut(publish, "\n")
	out := runBlocks(t, strings.NewReplacer("export TOKEN='12|…' SERVER=http://localhost:8080", "SERVER="+url),
		[]string{"TOKEN=" + token}, agent, tests, `echo; echo "agent: $A"`, command)

	id := regexp.MustCompile(`agent: (agt_\w+)`).FindSubmatch(out)
	if id == nil {
		t.Fatalf("step 1 made no agent:\n%s", out)
	}
	status, body := call(t, "GET", url+"/api/v1/agents/"+string(id[1])+"/tests", token, "")
	var list struct {
		Data []struct {
			Name     string `json:"name"`
			Required bool   `json:"required_for_publish"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); status != http.StatusOK || err != nil || len(list.Data) != 3 {
		t.Fatalf("step 2 should make three tests: %d %v %s", status, err, body)
	}
	// The refusal as the page shows it, "…" standing for what it leaves out.
	var shape []string
	for _, piece := range strings.Split(strings.TrimSpace(shown), "…") {
		shape = append(shape, regexp.QuoteMeta(piece))
	}
	expectOutput(t, out, strings.Join(shape, ".*"))
}

// TestAgentsAsCodeExampleRuns runs docs/agents-as-code.md's first commands (pull, plan,
// apply on a new workspace), then its example file with the exit-status check before and
// after an apply: plan says "changes to apply", apply makes them, plan says "in sync".
// The file's FAQ url is served here, so nothing leaves the machine.
func TestAgentsAsCodeExampleRuns(t *testing.T) {
	faq := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "We are open from nine to five on weekdays.")
	}))
	defer faq.Close()
	url, token := docServer(t, "--allow-url-prefix", faq.URL+"/")
	const doc = "docs/agents-as-code.md"
	first := docBlock(t, doc, "# Agents as code", "export VOICEAPI_TOKEN=")
	exitStatus := docBlock(t, doc, "detailed-exitcode", "voiceapi plan")
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	file := regexp.MustCompile("(?s)## The files\n.*?```yaml\n(.*?)```\n").FindSubmatch(raw)
	if file == nil {
		t.Fatalf("%s has no yaml block under \"The files\"", doc)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "infra", "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "infra", "docs", "refunds.md"), []byte("# Refunds\nWithin 30 days.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	replace := strings.NewReplacer("export VOICEAPI_TOKEN='12|…'", "export VOICEAPI_TOKEN='"+token+"'",
		"https://voice.example.com", url, "https://example.com/faq", faq.URL+"/faq")
	out := runBlocks(t, replace, []string{"VOICEAPI_SERVER=" + url, "MISTRAL_API_KEY=the-key", "PATH=" + filepath.Dir(voiceapiBinary(t)) + ":" + os.Getenv("PATH")},
		"cd "+dir, first,
		"cat > infra/support.yaml <<'YAML'\n"+replace.Replace(string(file[1]))+"YAML",
		"set +e", exitStatus, "set -e",
		"voiceapi apply -f infra/",
		"set +e", exitStatus, "set -e")
	expectOutput(t, out, `Wrote infra/voiceapi.yaml`, `(?s)changes to apply.*Apply complete: 4 changes\..*in sync`)
}

// troubleRow is one row of a page's Troubleshooting table: | status, code | message | what to do |.
type troubleRow struct {
	status  int
	code    string
	message *regexp.Regexp // the quoted message, "…" standing for anything
	quoted  string
}

var troubleLine = regexp.MustCompile("(?m)^\\| (\\d{3}) `(\\w+)` \\| \"(.*?)\" \\|")

// troubleshooting reads doc's Troubleshooting table.
func troubleshooting(t *testing.T, doc string) []troubleRow {
	t.Helper()
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "## Troubleshooting\n")
	if !ok {
		t.Fatalf("%s has no Troubleshooting section", doc)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []troubleRow
	for _, m := range troubleLine.FindAllStringSubmatch(section, -1) {
		var pattern []string
		for _, piece := range strings.Split(m[3], "…") {
			pattern = append(pattern, regexp.QuoteMeta(piece))
		}
		status := 0
		fmt.Sscan(m[1], &status)
		rows = append(rows, troubleRow{status: status, code: m[2], quoted: m[3],
			message: regexp.MustCompile("^" + strings.Join(pattern, "(?s:.*)") + "$")})
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no rows in its Troubleshooting table", doc)
	}
	return rows
}

// expectTroubleshooting holds each real refusal to a row of doc's table, and every row
// but those unchecked (a quoted message's start, with why) to a real refusal.
func expectTroubleshooting(t *testing.T, doc string, unchecked map[string]string, answers ...[]byte) {
	t.Helper()
	rows := troubleshooting(t, doc)
	met := make([]bool, len(rows))
	for _, a := range answers {
		var status int
		var e struct{ Message, Code string }
		head, body, _ := strings.Cut(string(a), " ")
		fmt.Sscan(head, &status)
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Fatalf("not an error answer: %s", a)
		}
		found := false
		for i, r := range rows {
			if r.status == status && r.code == e.Code && r.message.MatchString(e.Message) {
				met[i], found = true, true
			}
		}
		if !found {
			t.Errorf("%s's Troubleshooting table has no row for the real %d %s %q", doc, status, e.Code, e.Message)
		}
	}
	for i, r := range rows {
		why := ""
		for start, w := range unchecked {
			if strings.HasPrefix(r.quoted, start) {
				why = w
			}
		}
		if !met[i] && why == "" {
			t.Errorf("%s's Troubleshooting row %d %s %q was met by no real refusal", doc, r.status, r.code, r.quoted)
		}
	}
}

// answer is a request's status and body, as expectTroubleshooting reads them.
func answer(t *testing.T, req *http.Request) []byte {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return []byte(fmt.Sprintf("%d %s", resp.StatusCode, b))
}

func request(t *testing.T, method, url, token, contentType, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

// TestConversationsTroubleshooting meets each refusal docs/conversations.md's
// Troubleshooting table lists, and holds the table to what the server says.
func TestConversationsTroubleshooting(t *testing.T) {
	url, token := docServer(t)
	api := url + "/api/v1"
	post := func(path, tok, body string) []byte {
		return answer(t, request(t, "POST", api+path, tok, "application/json", body))
	}
	data := func(a []byte) map[string]any {
		_, body, _ := strings.Cut(string(a), " ")
		return decodeData(t, []byte(body))
	}
	agent := data(post("/agents", token, `{"name": "Front desk", "prompt_config": {"prompt": "You are the front desk of {{hotel}}.", "welcome_message": "Hello"}}`))["id"].(string)
	onLAN := data(post("/agents", token, `{"name": "LAN", "llm_config": {"provider": "internal", "model": "m", "base_url": "http://10.0.0.5:8000/v1"}, "prompt_config": {"prompt": "Hi"}}`))["id"].(string)
	key := func(scopes string) string {
		// The key's token is beside its record, not in it: shown once.
		_, body, _ := strings.Cut(string(post("/api-keys", token, `{"name": "k", "scopes": [`+scopes+`]}`)), " ")
		var created struct{ Token string }
		if err := json.Unmarshal([]byte(body), &created); err != nil || created.Token == "" {
			t.Fatalf("no key: %v %s", err, body)
		}
		return created.Token
	}
	start := "/agents/" + agent + "/conversations"
	lan := data(post("/agents/"+onLAN+"/conversations", token, `{"version": "draft"}`))["id"].(string)
	ended := data(post(start, token, `{"version": "draft", "variables": {"hotel": "Grand Hotel"}}`))["id"].(string)
	if a := post("/conversations/"+ended+"/end", token, ""); !strings.HasPrefix(string(a), "200 ") {
		t.Fatalf("end: %s", a)
	}
	// The bound on open conversations, met on a server that allows one.
	boundURL, boundToken := docServer(t, "--max-open-conversations", "1")
	postBound := func(path, body string) []byte {
		return answer(t, request(t, "POST", boundURL+"/api/v1"+path, boundToken, "application/json", body))
	}
	bounded := "/agents/" + data(postBound("/agents", `{"name": "Front desk"}`))["id"].(string) + "/conversations"
	if a := postBound(bounded, `{"version": "draft"}`); !strings.HasPrefix(string(a), "201 ") {
		t.Fatalf("the first start under the bound: %s", a)
	}
	expectTroubleshooting(t, "docs/conversations.md", map[string]string{
		"The language model provider groq answered":                   "a provider's refusal needs the provider: llm's tests hold its wording",
		"The language model provider internal did not answer in time": "llm's tests hold its wording",
		"A message of this conversation is being answered":            "needs a message in flight: service's TestConversationLease",
	},
		post(start, "not-a-token", `{}`),
		answer(t, request(t, "POST", api+start, token, "", `{"version": "draft"}`)),
		post(start, key(`"agents:read"`), `{}`),
		post(start, key(`"agents:read", "conversations:write"`), `{"version": "draft"}`),
		post(start, token, `{"variables": {"hotel": "Grand Hotel"}}`),
		post(start, token, `{"version": "draft"}`),
		post("/conversations/"+lan+"/messages", token, `{"content": "Hello?"}`),
		post("/conversations/"+ended+"/messages", token, `{"content": "Hello?"}`),
		postBound(bounded, `{"version": "draft"}`))
}

// TestRuntimeTroubleshooting meets each refusal docs/runtime.md's Troubleshooting table
// lists, and holds the table to what the server says.
func TestRuntimeTroubleshooting(t *testing.T) {
	url, token := docServer(t)
	api := url + "/api/v1"
	send := func(method, path, body string) []byte {
		return answer(t, request(t, method, api+path, token, "application/json", body))
	}
	id := func(a []byte) string {
		_, body, _ := strings.Cut(string(a), " ")
		return decodeData(t, []byte(body))["id"].(string)
	}
	agent := id(send("POST", "/agents", `{"name": "Front desk", "max_concurrent_calls": 1, "prompt_config": {"prompt": "You answer for {{company}}."}}`))
	number := id(send("POST", "/numbers", `{"phone_number": "+14155550123", "provider": "sip"}`))
	_, body, _ := strings.Cut(string(send("POST", "/api-keys", `{"name": "k", "scopes": ["agents:read"]}`)), " ")
	var readOnly struct{ Token string }
	if err := json.Unmarshal([]byte(body), &readOnly); err != nil || readOnly.Token == "" {
		t.Fatalf("no key: %v %s", err, body)
	}
	const inbound = `{"direction": "inbound", "to_number": "+14155550123"}`
	start := func() []byte { return send("POST", "/calls/start", inbound) }
	var answers [][]byte
	answers = append(answers,
		answer(t, request(t, "POST", api+"/calls/start", readOnly.Token, "application/json", inbound)),
		answer(t, request(t, "POST", api+"/calls/start", token, "", inbound)),
		send("POST", "/calls/start", `{"direction": "inbound", "to_number": "4155550123"}`),
		send("POST", "/calls/start", `{"direction": "inbound", "to_number": "+14155550999"}`),
		start())
	send("PUT", "/numbers/"+number, `{"inbound_agent_id": "`+agent+`"}`)
	answers = append(answers, start())
	send("POST", "/agents/"+agent+"/publish", "")
	answers = append(answers, start())
	send("PUT", "/numbers/"+number, `{"variables": {"company": "Acme"}}`)
	if a := start(); !strings.HasPrefix(string(a), "201 ") {
		t.Fatalf("start: %s", a)
	}
	answers = append(answers, start())
	expectTroubleshooting(t, "docs/runtime.md", nil, answers...)
}

// TestAnalysisTroubleshooting meets the refusals docs/analysis.md's Troubleshooting table
// lists: analysis asked of a call whose version declares nothing (the fields were saved
// on the draft after it), and by a key that may only read calls.
func TestAnalysisTroubleshooting(t *testing.T) {
	url, token := docServer(t)
	api := url + "/api/v1"
	send := func(tok, method, path, body string) []byte {
		return answer(t, request(t, method, api+path, tok, "application/json", body))
	}
	data := func(a []byte) map[string]any {
		_, body, _ := strings.Cut(string(a), " ")
		return decodeData(t, []byte(body))
	}
	agent := data(send(token, "POST", "/agents", `{"name": "Front desk"}`))["id"].(string)
	send(token, "POST", "/agents/"+agent+"/publish", "")
	send(token, "PUT", "/agents/"+agent, `{"analysis_config": {"fields": [{"name": "outcome", "type": "string", "description": "How it ended"}]}}`)
	call := data(send(token, "POST", "/calls", `{"agent_id": "`+agent+`", "direction": "web", "status": "ended"}`))["id"].(string)
	_, body, _ := strings.Cut(string(send(token, "POST", "/api-keys", `{"name": "k", "scopes": ["call_history:read"]}`)), " ")
	var reader struct{ Token string }
	if err := json.Unmarshal([]byte(body), &reader); err != nil || reader.Token == "" {
		t.Fatalf("no key: %v %s", err, body)
	}
	expectTroubleshooting(t, "docs/analysis.md", nil,
		send(token, "POST", "/calls/"+call+"/analyze", ""),
		send(reader.Token, "POST", "/calls/"+call+"/analyze", ""))
}
