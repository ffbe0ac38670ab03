package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

func TestApplyTwiceThenPlanIsEmpty(t *testing.T) {
	s := newIACServer(t)
	ctx := context.Background()
	const key = "sk-test-abcdefgh12345678WXYZ"
	t.Setenv("IAC_TEST_KEY", key)
	dir := iacDir(t, iacAgent)

	out, err := s.cmd(t, "plan", "-f", dir)
	if ExitCode(err) != 2 {
		t.Fatalf("plan before apply: exit %d (%v), want 2\n%s", ExitCode(err), err, out)
	}
	for _, want := range []string{`+ knowledge base "Help"`, `+ agent "Support"`, `+ number "+14155550100"`, `+ webhook "https://example.com/hooks/voice"`,
		`+ llm_config.api_key: "****WXYZ"`, "Plan: 4 to create, 0 to change, 0 to delete."} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, key) {
		t.Errorf("plan prints the secret:\n%s", out)
	}

	out, err = s.cmd(t, "apply", "-f", dir)
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Apply complete: 4 changes.") {
		t.Errorf("apply does not count its changes in words:\n%s", out)
	}
	if strings.Contains(out, key) {
		t.Errorf("apply prints the secret:\n%s", out)
	}
	out, err = s.cmd(t, "plan", "-f", dir)
	if ExitCode(err) != 0 || !strings.Contains(out, "No changes") {
		t.Fatalf("plan after apply: exit %d, want 0\n%s", ExitCode(err), out)
	}
	out, err = s.cmd(t, "apply", "-f", dir)
	if err != nil || !strings.Contains(out, "No changes") {
		t.Fatalf("second apply: %v\n%s", err, out)
	}

	// The server holds what the files say, references resolved and the secret from the env.
	agents, _ := client.Collect(s.c.Agents.All(ctx, client.AgentFilter{}))
	kbs, _ := client.Collect(s.c.KnowledgeBases.All(ctx))
	nums, _ := client.Collect(s.c.Numbers.All(ctx, data.NumberFilter{}))
	if len(agents) != 1 || len(kbs) != 1 || len(nums) != 1 {
		t.Fatalf("%d agents, %d knowledge bases, %d numbers after two applies", len(agents), len(kbs), len(nums))
	}
	a, kb := agents[0], kbs[0]
	if a.LLMConfig.APIKey == nil || *a.LLMConfig.APIKey != data.MaskSecret(key) || a.CallConfig.RingDurationMS != 20000 ||
		a.CallConfig.MaxCallDurationMS != data.DefaultMaxCallDurationMS || len(a.LLMConfig.Tools) != 1 {
		t.Errorf("agent on the server: %+v", a.AgentConfig)
	}
	if len(a.LLMConfig.KnowledgeBaseIDs) != 1 || a.LLMConfig.KnowledgeBaseIDs[0] != kb.ID {
		t.Errorf("knowledge_base_ids %v, want [%s]", a.LLMConfig.KnowledgeBaseIDs, kb.ID)
	}
	if len(kb.Texts) != 1 || len(kb.URLs) != 1 || len(kb.Files) != 1 || kb.Files[0].Filename != "refunds.md" {
		t.Errorf("knowledge base sources: %+v", kb)
	}
	if nums[0].InboundAgentID == nil || *nums[0].InboundAgentID != a.ID {
		t.Errorf("number's inbound agent %v, want %s", nums[0].InboundAgentID, a.ID)
	}
}

// TestPlanShowsFieldDiffAndApplyPublishes: an edit shows as a field-level diff (exit 2)
// naming only the changed members; apply --publish publishes the changed agent.
func TestPlanShowsFieldDiffAndApplyPublishes(t *testing.T) {
	s := newIACServer(t)
	ctx := context.Background()
	t.Setenv("IAC_TEST_KEY", "sk-test-abcdefgh12345678WXYZ")
	dir := iacDir(t, iacAgent)
	if out, err := s.cmd(t, "apply", "-f", dir); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	agents, _ := client.Collect(s.c.Agents.All(ctx, client.AgentFilter{}))
	a := agents[0]
	changed := strings.Replace(iacAgent, "temperature: 0.5", "temperature: 0.7", 1)
	changed = strings.Replace(changed, "hours.", "refunds.", 1)
	writeFiles2(t, dir, "agents/support.yaml", changed)
	writeFiles2(t, dir, "docs/refunds.md", "# Refunds\n\nRefunds take ten days.\n")
	out, err := s.cmd(t, "plan", "-f", dir)
	if ExitCode(err) != 2 {
		t.Fatalf("plan after an edit: exit %d\n%s", ExitCode(err), out)
	}
	for _, want := range []string{`~ agent "Support"`, "~ llm_config.temperature: 0.5 → 0.7", `~ prompt_config.prompt: "You answer questions about opening hours." → "You answer questions about opening refunds."`,
		`~ knowledge base "Help"`, `- files: "refunds.md"`, `+ files: "refunds.md"`, "Plan: 0 to create, 2 to change, 0 to delete."} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ring_duration_ms") {
		t.Errorf("an unchanged member is in the diff:\n%s", out)
	}
	if out, err = s.cmd(t, "apply", "-f", dir, "--publish", "--description", "warmer"); err != nil {
		t.Fatalf("apply --publish: %v\n%s", err, out)
	}
	got, _, _ := s.c.Agents.Get(ctx, a.ID)
	vs, _ := client.Collect(s.c.Agents.AllVersions(ctx, a.ID))
	if got.Status != data.AgentStatusPublished || len(vs) != 1 || vs[0].Description == nil || *vs[0].Description != "warmer" || *got.LLMConfig.Temperature != 0.7 {
		t.Errorf("after apply --publish: status %s, versions %d, temperature %v", got.Status, len(vs), *got.LLMConfig.Temperature)
	}
	if out, err = s.cmd(t, "plan", "-f", dir); ExitCode(err) != 0 {
		t.Errorf("plan after the second apply: exit %d\n%s", ExitCode(err), out)
	}
}

func writeFiles2(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestApplyStopsOnConcurrentEdit: a change made between apply's read and its write is a
// 412 that stops the apply with a clear message, and the change is kept.
func TestApplyStopsOnConcurrentEdit(t *testing.T) {
	s := newIACServer(t)
	ctx := context.Background()
	t.Setenv("IAC_TEST_KEY", "sk-test-abcdefgh12345678WXYZ")
	dir := iacDir(t, iacAgent)
	if out, err := s.cmd(t, "apply", "-f", dir); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	writeFiles2(t, dir, "agents/support.yaml", strings.Replace(iacAgent, "temperature: 0.5", "temperature: 0.9", 1))
	agents, _ := client.Collect(s.c.Agents.All(ctx, client.AgentFilter{}))
	id := agents[0].ID
	beforeApply = func() {
		if _, _, err := s.c.Agents.Update(ctx, id, client.AgentInput{Patch: map[string]map[string]any{"call_config": {"ring_duration_ms": 25000}}}); err != nil {
			t.Errorf("the concurrent edit: %v", err)
		}
	}
	t.Cleanup(func() { beforeApply = nil })
	out, err := s.cmd(t, "apply", "-f", dir)
	if err == nil || ExitCode(err) != 1 {
		t.Fatalf("apply over a concurrent edit succeeded:\n%s", out)
	}
	for _, want := range []string{`agent "Support" was changed on the server`, "412", "not overwritten", "Run plan again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
	got, _, _ := s.c.Agents.Get(ctx, id)
	if got.CallConfig.RingDurationMS != 25000 || *got.LLMConfig.Temperature != 0.5 {
		t.Errorf("after the stopped apply: ring %d (want the concurrent 25000), temperature %v (want 0.5)", got.CallConfig.RingDurationMS, *got.LLMConfig.Temperature)
	}
	beforeApply = nil
	out, _ = s.cmd(t, "plan", "-f", dir)
	if !strings.Contains(out, "~ call_config.ring_duration_ms: 25000 → 20000") {
		t.Errorf("plan does not show the concurrent change:\n%s", out)
	}
}

func TestPruneOnlyWithFlag(t *testing.T) {
	s := newIACServer(t)
	ctx := context.Background()
	dir := writeFiles(t, map[string]string{"a.yaml": "agents:\n  - name: Kept\n"})
	if out, err := s.cmd(t, "apply", "-f", dir); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	extra, _, err := s.c.Agents.Create(ctx, client.AgentInput{Name: ptrTo("Console only")})
	if err != nil {
		t.Fatal(err)
	}
	hook, err := s.c.Webhooks.Create(ctx, data.WebhookCreate{URL: "https://example.com/x", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}

	out, err := s.cmd(t, "plan", "-f", dir)
	// Only kinds the files declare are read: the extra agent is counted, the webhook not.
	if ExitCode(err) != 0 || !strings.Contains(out, "1 record on the server is not in the files; --prune would delete it.") || strings.Contains(out, "- agent") {
		t.Fatalf("plan without --prune: exit %d\n%s", ExitCode(err), out)
	}
	if _, err := s.cmd(t, "apply", "-f", dir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.c.Agents.Get(ctx, extra.ID); err != nil {
		t.Fatalf("apply without --prune deleted an agent: %v", err)
	}

	out, err = s.cmd(t, "plan", "-f", dir, "--prune")
	if ExitCode(err) != 2 || !strings.Contains(out, `- agent "Console only"`) || !strings.Contains(out, `- webhook "https://example.com/x"`) || strings.Contains(out, `- agent "Kept"`) {
		t.Fatalf("plan --prune: exit %d\n%s", ExitCode(err), out)
	}
	if out, err := s.cmd(t, "apply", "-f", dir, "--prune"); err != nil {
		t.Fatalf("apply --prune: %v\n%s", err, out)
	}
	if _, _, err := s.c.Agents.Get(ctx, extra.ID); !client.IsCode(err, data.ENOTFOUND) {
		t.Errorf("the extra agent after --prune: %v", err)
	}
	if _, _, err := s.c.Webhooks.Get(ctx, hook.Webhook.ID); !client.IsCode(err, data.ENOTFOUND) {
		t.Errorf("the extra webhook after --prune: %v", err)
	}
	agents, _ := client.Collect(s.c.Agents.All(ctx, client.AgentFilter{}))
	if len(agents) != 1 || agents[0].Name != "Kept" {
		t.Errorf("agents after --prune: %v", agents)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestPullThenPlanIsEmpty: state made through the API, pulled, plans as no changes; the
// pulled file holds an env reference, never the key.
func TestPullThenPlanIsEmpty(t *testing.T) {
	s := newIACServer(t)
	ctx := context.Background()
	kb, _, err := s.c.KnowledgeBases.Create(ctx, data.KnowledgeBaseCreate{Name: "Docs", Texts: []data.TextInput{{Title: "a", Content: "Alpha text."}}, URLs: []string{"https://example.com/doc"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.c.KnowledgeBases.AddSources(ctx, kb.ID, data.SourcesAdd{Files: []data.FileUpload{{Filename: "guide.txt", Content: []byte("A guide to the product.")}}}); err != nil {
		t.Fatal(err)
	}
	const key = "sk-pulled-key-0123456789"
	a, _, err := s.c.Agents.Create(ctx, client.AgentInput{Name: ptrTo("Sales Bot"), Patch: map[string]map[string]any{
		"llm_config": {"provider": "mistral", "model": "mistral-large-latest", "api_key": key, "knowledge_base_ids": []string{kb.ID},
			"tools": []any{map[string]any{"name": "transfer", "type": "transfer_call", "phone_directory": []any{map[string]any{"name": "desk", "phone_number": "+14155550111", "description": "the desk", "transfer_type": "cold"}}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.c.Numbers.Create(ctx, data.NumberCreate{PhoneNumber: "+14155550199", Provider: data.ProviderSIP, OutboundAgentID: &a.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.c.Webhooks.Create(ctx, data.WebhookCreate{URL: "https://example.com/h", Events: []string{"*"}, Description: "all"}); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	out, err := s.cmd(t, "pull", "-o", dir)
	if err != nil {
		t.Fatalf("pull: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Set VOICEAPI_SALES_BOT_API_KEY") {
		t.Errorf("pull does not name the variable to set:\n%s", out)
	}
	raw, err := os.ReadFile(filepath.Join(dir, PullFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), key[len(key)-4:]) || strings.Contains(string(raw), "****") || !strings.Contains(string(raw), "${env:VOICEAPI_SALES_BOT_API_KEY}") {
		t.Errorf("the pulled file's api_key is not an env reference:\n%s", raw)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "files", "docs", "guide.txt")); err != nil || string(b) != "A guide to the product." {
		t.Errorf("pulled file: %q, %v", b, err)
	}
	if _, err := s.cmd(t, "pull", "-o", dir); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("a second pull overwrote the file: %v", err)
	}
	// --force replaces the file in one rename: a reader of the last pull reads it whole.
	reader, err := os.Open(filepath.Join(dir, PullFile))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if _, err := s.c.Webhooks.Create(ctx, data.WebhookCreate{URL: "https://example.com/later", Events: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	if out, err := s.cmd(t, "pull", "-o", dir, "--force"); err != nil {
		t.Fatalf("pull --force: %v\n%s", err, out)
	}
	if held, _ := io.ReadAll(reader); !bytes.Equal(held, raw) {
		t.Errorf("the reader of the last pull read %d bytes of %d", len(held), len(raw))
	}
	if now, _ := os.ReadFile(filepath.Join(dir, PullFile)); !strings.Contains(string(now), "https://example.com/later") {
		t.Errorf("pull --force did not write the new state:\n%s", now)
	}

	// Without the variable, plan names it; with it, nothing changes.
	os.Unsetenv("VOICEAPI_SALES_BOT_API_KEY")
	if _, err := s.cmd(t, "plan", "-f", dir); err == nil || !strings.Contains(err.Error(), "VOICEAPI_SALES_BOT_API_KEY is not set") || !strings.Contains(err.Error(), PullFile) {
		t.Errorf("plan without the variable: %v", err)
	}
	t.Setenv("VOICEAPI_SALES_BOT_API_KEY", key)
	out, err = s.cmd(t, "plan", "-f", dir, "--prune")
	if ExitCode(err) != 0 {
		t.Fatalf("plan after pull: exit %d (%v)\n%s\nfile:\n%s", ExitCode(err), err, out, raw)
	}
	// A different key is a change, shown masked.
	t.Setenv("VOICEAPI_SALES_BOT_API_KEY", "sk-another-key-99998888")
	out, _ = s.cmd(t, "plan", "-f", dir)
	if !strings.Contains(out, `~ llm_config.api_key: "****6789" → "****8888"`) || strings.Contains(out, "sk-another") {
		t.Errorf("a changed key:\n%s", out)
	}
}

// TestBadFilesNameFileAndField: every fault names the file and the field.
func TestBadFilesNameFileAndField(t *testing.T) {
	s := newIACServer(t)
	cases := []struct {
		name, content string
		want          []string
	}{
		{"unknown group member", "agents:\n  - name: A\n    llm_config: {temprature: 0.5}\n", []string{`agents["A"].llm_config.temprature: unknown field`}},
		{"wrong type", "agents:\n  - name: A\n    llm_config: {temperature: warm}\n", []string{`agents["A"].llm_config.temperature`, "must be a number"}},
		{"unknown agent member", "agents:\n  - name: A\n    voice: x\n", []string{`agents["A"].voice: unknown field`}},
		{"group not a mapping", "agents:\n  - name: A\n    call_config: 5\n", []string{`agents["A"].call_config: must be a mapping`}},
		{"agent without name", "agents:\n  - call_config: {}\n", []string{"agents[0].name"}},
		{"unknown kind", "agent:\n  - name: A\n", []string{`unknown field "agent"`}},
		{"missing env", "agents:\n  - name: A\n    llm_config: {api_key: '${env:IAC_SURELY_UNSET}'}\n", []string{"agents[0].llm_config.api_key", "IAC_SURELY_UNSET is not set"}},
		{"unknown knowledge base", "agents:\n  - name: A\n    knowledge_bases: [Nope]\n", []string{`agents["A"].knowledge_bases[0]`, `"Nope"`}},
		{"unknown agent reference", "numbers:\n  - {phone_number: '+14155550100', provider: twilio, inbound_agent: Ghost}\n", []string{`numbers["+14155550100"].inbound_agent`, `"Ghost"`}},
		{"misspelt tool member", "agents:\n  - name: A\n    llm_config: {tools: [{name: x, type: end_call, descripton: y}]}\n", []string{`agents["A"].llm_config.tools`, "descripton"}},
		{"unquoted phone number", "numbers:\n  - {phone_number: +14155550100, provider: twilio}\n", []string{"numbers.phone_number", "must be a string"}},
		{"a source twice", "knowledge_bases:\n  - {name: K, urls: [https://example.com/a, https://example.com/a]}\n", []string{`knowledge_bases["K"].urls[1]: the same source as urls[0]`}},
		{"ids instead of names", "agents:\n  - name: A\n    llm_config: {knowledge_base_ids: [x]}\n", []string{"knowledge_base_ids", "knowledge_bases"}},
		{"missing kb file", "knowledge_bases:\n  - {name: K, files: [nope.md]}\n", []string{"knowledge_bases[0].files[0]", "nope.md"}},
		{"yaml syntax", "agents: [\n", []string{"yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"bad.yaml": tc.content})
			_, err := s.cmd(t, "plan", "-f", dir)
			if ExitCode(err) != 1 {
				t.Fatalf("exit %d (%v)", ExitCode(err), err)
			}
			for _, w := range append(tc.want, "bad.yaml") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error lacks %q: %v", w, err)
				}
			}
		})
	}

	// Faults only the server knows come back from apply with the field, and nothing is
	// half-created for that agent.
	dir := writeFiles(t, map[string]string{"a.yaml": "agents:\n  - name: A\n    call_config: {ring_duration_ms: -5}\n"})
	_, err := s.cmd(t, "apply", "-f", dir)
	if err == nil || !strings.Contains(err.Error(), `agent "A"`) || !strings.Contains(err.Error(), "call_config.ring_duration_ms") {
		t.Errorf("a server-side fault: %v", err)
	}
	// Two declarations of one name are refused with both files.
	dir = writeFiles(t, map[string]string{"a.yaml": "agents:\n  - name: A\n", "b.json": `{"agents":[{"name":"A"}]}`})
	if _, err := s.cmd(t, "plan", "-f", dir); err == nil || !strings.Contains(err.Error(), "a.yaml") || !strings.Contains(err.Error(), "b.json") {
		t.Errorf("a duplicate: %v", err)
	}
	dir = writeFiles(t, map[string]string{"a.yaml": "agents:\n  - name: A\n"})
	if _, _, err := run(t, "", "plan", "-f", dir, "--server", s.url, "--token", ""); err == nil || !strings.Contains(err.Error(), "VOICEAPI_TOKEN") {
		t.Errorf("no token: %v", err)
	}
}

// TestApplyStopsOnConcurrentEditOfEachKind: knowledge bases, numbers and webhooks are
// guarded like agents.
func TestApplyStopsOnConcurrentEditOfEachKind(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		kind     string
		old, new string // the file change
		console  func(s *iacServer) error
		kept     func(s *iacServer) bool
	}{
		{"knowledge base", "content: We are open from nine to five on weekdays.", "content: We are open around the clock.",
			func(s *iacServer) error {
				kbs, _ := client.Collect(s.c.KnowledgeBases.All(ctx))
				_, _, err := s.c.KnowledgeBases.AddSources(ctx, kbs[0].ID, data.SourcesAdd{Texts: []data.TextInput{{Title: "console", Content: "Added in the console."}}})
				return err
			},
			func(s *iacServer) bool {
				kbs, _ := client.Collect(s.c.KnowledgeBases.All(ctx))
				return len(kbs[0].Texts) == 2 && kbs[0].Texts[0].Content == "We are open from nine to five on weekdays."
			}},
		// Only adding sources: the server's sources/add takes no If-Match, apply re-reads.
		{"knowledge base", "urls: [https://example.com/faq]", "urls: [https://example.com/faq, https://example.com/more]",
			func(s *iacServer) error {
				kbs, _ := client.Collect(s.c.KnowledgeBases.All(ctx))
				_, _, err := s.c.KnowledgeBases.AddSources(ctx, kbs[0].ID, data.SourcesAdd{Texts: []data.TextInput{{Title: "console", Content: "Added in the console."}}})
				return err
			},
			func(s *iacServer) bool {
				kbs, _ := client.Collect(s.c.KnowledgeBases.All(ctx))
				return len(kbs[0].Texts) == 2 && len(kbs[0].URLs) == 1
			}},
		{"number", `"nickname":"front desk"`, `"nickname":"reception"`,
			func(s *iacServer) error {
				nums, _ := client.Collect(s.c.Numbers.All(ctx, data.NumberFilter{}))
				_, _, err := s.c.Numbers.Update(ctx, nums[0].ID, data.NumberUpdate{Provider: data.Some(data.ProviderTelnyx)})
				return err
			},
			func(s *iacServer) bool {
				nums, _ := client.Collect(s.c.Numbers.All(ctx, data.NumberFilter{}))
				return nums[0].Provider == data.ProviderTelnyx && nums[0].Nickname == "front desk"
			}},
		{"webhook", `"description":"CRM sync"`, `"description":"CRM"`,
			func(s *iacServer) error {
				hooks, _ := client.Collect(s.c.Webhooks.All(ctx))
				_, _, err := s.c.Webhooks.Update(ctx, hooks[0].ID, data.WebhookUpdate{Enabled: data.Some(false)})
				return err
			},
			func(s *iacServer) bool {
				hooks, _ := client.Collect(s.c.Webhooks.All(ctx))
				return !hooks[0].Enabled && hooks[0].Description == "CRM sync"
			}},
	}
	for _, tc := range cases {
		t.Run(tc.kind+" "+tc.new, func(t *testing.T) {
			s := newIACServer(t)
			t.Setenv("IAC_TEST_KEY", "sk-test-abcdefgh12345678WXYZ")
			dir := iacDir(t, iacAgent)
			if out, err := s.cmd(t, "apply", "-f", dir); err != nil {
				t.Fatalf("apply: %v\n%s", err, out)
			}
			for _, name := range []string{"kb.yaml", "rest.json"} {
				b, _ := os.ReadFile(filepath.Join(dir, name))
				writeFiles2(t, dir, name, strings.Replace(string(b), tc.old, tc.new, 1))
			}
			beforeApply = func() {
				if err := tc.console(s); err != nil {
					t.Errorf("the console edit: %v", err)
				}
			}
			t.Cleanup(func() { beforeApply = nil })
			_, err := s.cmd(t, "apply", "-f", dir)
			if err == nil || !strings.Contains(err.Error(), tc.kind) || !strings.Contains(err.Error(), "412") {
				t.Fatalf("apply over a console edit of the %s: %v", tc.kind, err)
			}
			if !tc.kept(s) {
				t.Errorf("the console's edit of the %s was overwritten, or the file's applied", tc.kind)
			}
		})
	}
}

// TestApplyCreateSurvivesALostResponse: the server creates the agent but the response is
// lost (a proxy's 502); apply's retry carries the same Idempotency-Key, so the server
// answers with that agent instead of creating a second one.
func TestApplyCreateSurvivesALostResponse(t *testing.T) {
	var lost atomic.Bool
	s := newIACServer(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Path == "/api/v1/agents" && lost.CompareAndSwap(false, true) {
				h.ServeHTTP(httptest.NewRecorder(), r) // done, but the answer never arrives
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	dir := writeFiles(t, map[string]string{"a.yaml": "agents:\n  - name: Once\n    call_config: {ring_duration_ms: 15000}\n"})
	if out, err := s.cmd(t, "apply", "-f", dir); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	agents, _ := client.Collect(s.c.Agents.All(context.Background(), client.AgentFilter{}))
	if !lost.Load() || len(agents) != 1 {
		t.Fatalf("lost response injected: %v; %d agents after apply, want 1", lost.Load(), len(agents))
	}
}

// TestPlanWithAnAgentsOnlyToken: a developer whose modules are agents and knowledge bases
// can plan and apply agent files; the kinds the files do not declare are not read.
func TestPlanWithAnAgentsOnlyToken(t *testing.T) {
	s := newIACServer(t)
	ctx := context.Background()
	me, _, err := s.c.Users.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dev, _, err := s.c.Users.Create(ctx, data.UserCreate{Name: "Dev", Email: "dev@example.com", Password: "dev-password"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.c.Workspaces.AddUser(ctx, me.PersonalWorkspaceID, data.WorkspaceUserAdd{ID: dev.ID, Role: data.RoleDeveloper,
		Modules: data.Some([]string{data.ModuleAgents, data.ModuleKnowledgeBase})})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.c.Auth.Login(ctx, "dev@example.com", "dev-password", me.PersonalWorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.c.Numbers.Create(ctx, data.NumberCreate{PhoneNumber: "+14155550123", Provider: data.ProviderSIP}); err != nil {
		t.Fatal(err)
	}
	devClient, _ := client.New(s.url, client.WithToken(tok.Token))
	if _, _, err := devClient.Numbers.List(ctx, data.NumberFilter{}, data.PageRequest{}); !client.IsCode(err, data.EFORBIDDEN) {
		t.Fatalf("the developer can read numbers (%v): the test proves nothing", err)
	}
	dir := writeFiles(t, map[string]string{"a.yaml": "agents:\n  - name: Dev agent\n    knowledge_bases: []\n"})
	s.token = tok.Token
	if out, err := s.cmd(t, "apply", "-f", dir); err != nil {
		t.Fatalf("apply with an agents-only token: %v\n%s", err, out)
	}
	if out, err := s.cmd(t, "plan", "-f", dir); ExitCode(err) != 0 {
		t.Fatalf("plan with an agents-only token: exit %d (%v)\n%s", ExitCode(err), err, out)
	}
	if _, err := s.cmd(t, "plan", "-f", dir, "--prune"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("--prune reads every kind, numbers included: %v", err)
	}
}

// TestPrintMasksBeforeCutting: a secret that straddles the 100-character cut of a long
// value is masked whole, never shown in part.
func TestPrintMasksBeforeCutting(t *testing.T) {
	secret := "sk-live-" + strings.Repeat("s", 30) + "TAIL"
	header := strings.Repeat("x", 52) + " Bearer " + secret // the secret starts 90 characters into the value
	p := &plan{secrets: []string{secret}, actions: []*action{{op: '+', kind: "agent", key: "A", lines: []string{
		set("llm_config.tools", []any{map[string]any{"custom_function_headers": []string{header}}}),
		change("prompt_config.prompt", strings.Repeat("a", 150), "short"),
	}}}}
	var out bytes.Buffer
	p.print(&out)
	got := out.String()
	if strings.Contains(got, "sk-live") || strings.Contains(got, "sssss") {
		t.Errorf("part of the secret is shown:\n%s", got)
	}
	if !strings.Contains(got, `→ "short"`) || !strings.Contains(got, strings.Repeat("a", 96)+"…") {
		t.Errorf("each value is cut on its own:\n%s", got)
	}
	if strings.ContainsAny(got, valueStart+valueEnd) {
		t.Errorf("value marks leak into the output: %q", got)
	}
}
