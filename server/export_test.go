package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/server"
)

// exportEnv is a knowledge base environment that may fetch urls on loopback.
func exportEnv(t *testing.T, configure ...func(*server.Config)) *env {
	t.Helper()
	cfg := server.Config{AllowPrivateURLs: true}
	for _, f := range configure {
		f(&cfg)
	}
	return newKBEnv(t, kbEnvOptions{server: cfg, fetcher: true})
}

// seedWorkspace fills the owner's workspace with one of everything an export carries and
// returns the new agents' ids (restored, draft) and the knowledge base's id.
func seedWorkspace(t *testing.T, e *env, pageURL string) (restored, draft, kbID string) {
	t.Helper()
	tok := e.Owner.Token
	kb := e.createKB(tok, map[string]any{"name": "Store policies",
		"texts": []any{map[string]any{"title": "Hours", "content": "The store opens at nine and closes at six on weekdays."}},
		"urls":  []any{pageURL}})
	kbID = kb["id"].(string)
	expect(t, e.addParts(tok, kbID, part{name: "files", filename: "returns.pdf", content: readTestFile(t, "returns.pdf")}), 200)
	eventually(t, "the url source indexed", func() bool {
		return items(e.kb(tok, kbID), "urls")[0]["status"] == "indexed"
	})

	r := e.do("POST", "/api/v1/agents", tok, map[string]any{"name": "Support bot",
		"llm_config": map[string]any{"api_key": "gsk_live_secret_9876", "knowledge_base_ids": []any{kbID},
			"tools": []any{map[string]any{"name": "hang_up", "type": "end_call", "description": "End the call politely."}}},
		"prompt_config": map[string]any{"prompt": "You help with returns."}})
	expect(t, r, 201)
	restored = r.Data()["id"].(string)
	expect(t, e.do("POST", "/api/v1/agents/"+restored+"/publish", tok, map[string]any{"description": "first"}), 204)
	expect(t, e.do("PUT", "/api/v1/agents/"+restored, tok, map[string]any{"prompt_config": map[string]any{"prompt": "You help with returns and exchanges."}}), 200)
	expect(t, e.do("POST", "/api/v1/agents/"+restored+"/publish", tok, map[string]any{"description": "second"}), 204)
	expect(t, e.do("POST", "/api/v1/agents/"+restored+"/versions/1/restore", tok, nil), 200)

	r = e.do("POST", "/api/v1/agents", tok, map[string]any{"name": "Sales bot"})
	expect(t, r, 201)
	draft = r.Data()["id"].(string)

	expect(t, e.do("POST", "/api/v1/numbers", tok, map[string]any{"phone_number": "+14155550101", "nickname": "Main",
		"provider": "twilio", "inbound_agent_id": restored, "outbound_agent_id": draft}), 201)
	expect(t, e.do("POST", "/api/v1/numbers", tok, map[string]any{"phone_number": "+14155550102", "provider": "sip"}), 201)
	expect(t, e.do("POST", "/api/v1/webhooks", tok, map[string]any{"url": "https://hooks.example.com/voice",
		"events": []any{"agent.published", "number.created"}, "description": "CRM"}), 201)
	return restored, draft, kbID
}

// export fetches the workspace's export and decodes it.
func (e *env) export(token, ws, query string) (map[string]any, []byte) {
	e.t.Helper()
	r := e.do("GET", "/api/v1/workspaces/"+ws+"/export"+query, token, nil)
	expect(e.t, r, 200)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		e.t.Fatalf("export Content-Type %q", ct)
	}
	var doc map[string]any
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		e.t.Fatalf("export does not parse: %v", err)
	}
	return doc, r.Body
}

// withoutExportTime drops exported_at, the one member two exports of the same content differ in.
func withoutExportTime(doc map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range doc {
		if k != "exported_at" {
			out[k] = v
		}
	}
	return out
}

// at walks a decoded document along a dot path ("agents.0.llm_config.api_key").
func at(v any, path string) any {
	for _, p := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			v = c[p]
		case []any:
			i := 0
			for _, ch := range p {
				i = i*10 + int(ch-'0')
			}
			if i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

func TestWorkspaceExportImportRoundTrip(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("Gift cards can be used online and in every store, and never expire."))
	}))
	defer page.Close()
	src := exportEnv(t)
	restored, _, _ := seedWorkspace(t, src, page.URL)
	clear, raw := checkExportedDocument(t, src, restored)

	dst := exportEnv(t)
	ws := dst.Owner.WorkspaceID
	r := dst.do("POST", "/api/v1/workspaces/"+ws+"/import", dst.Owner.Token, raw)
	expect(t, r, 201)
	secrets, _ := r.JSON()["webhook_secrets"].([]any)
	if len(secrets) != 1 || !strings.HasPrefix(at(secrets, "0.secret").(string), "whsec_") {
		t.Fatalf("webhook_secrets = %v", r.JSON()["webhook_secrets"])
	}
	if m := r.Data()["missing_secrets"].([]any); len(m) != 0 {
		t.Errorf("missing_secrets = %v after a clear export", m)
	}
	newKB := at(r.Data(), "knowledge_bases.0.id").(string)
	newSupport := at(r.Data(), "agents.0.id").(string)

	// Files are indexed at import, urls once fetched again: wait, then the two instances
	// must export the same document, which compares every agent, version, snapshot,
	// source, number and webhook at once.
	eventually(t, "the imported url source indexed", func() bool {
		return items(dst.kb(dst.Owner.Token, newKB), "urls")[0]["status"] == "indexed"
	})
	again, _ := dst.export(dst.Owner.Token, ws, "?include_secrets=true")
	if !reflect.DeepEqual(withoutExportTime(clear), withoutExportTime(again)) {
		a, _ := json.MarshalIndent(withoutExportTime(clear), "", " ")
		b, _ := json.MarshalIndent(withoutExportTime(again), "", " ")
		t.Fatalf("the imported workspace exports differently:\nsource:\n%.3000s\nimported:\n%.3000s", a, b)
	}
	checkImportedRecords(t, dst, newKB, newSupport)
	checkSecondImportRefused(t, dst, raw)
}

// checkExportedDocument exports src's workspace, masked by default and then with its
// secrets, and checks the document: no instance ids or webhook secrets, the restored
// agent published, references rewritten to export keys. It returns the clear export,
// decoded and as sent.
func checkExportedDocument(t *testing.T, src *env, restored string) (map[string]any, []byte) {
	t.Helper()
	masked, _ := src.export(src.Owner.Token, src.Owner.WorkspaceID, "")
	if got := at(masked, "agents.0.llm_config.api_key"); got != "****9876" {
		t.Errorf("default export api_key = %v, want the mask", got)
	}
	if got := at(masked, "agents.0.versions.0.llm_config.api_key"); got != "****9876" {
		t.Errorf("default export version api_key = %v, want the mask", got)
	}
	clear, raw := src.export(src.Owner.Token, src.Owner.WorkspaceID, "?include_secrets=true")
	if got := at(clear, "agents.0.llm_config.api_key"); got != "gsk_live_secret_9876" {
		t.Errorf("include_secrets api_key = %v", got)
	}
	for _, instanceID := range []string{src.Owner.WorkspaceID, restored, "whsec_"} {
		if strings.Contains(string(raw), instanceID) {
			t.Errorf("the export names %q: instance ids and secrets must not travel", instanceID)
		}
	}
	if at(clear, "agents.0.status") != "published" || at(clear, "agents.0.published_version") != 1.0 {
		t.Errorf("restored agent exported as %v at %v", at(clear, "agents.0.status"), at(clear, "agents.0.published_version"))
	}
	if at(clear, "agents.0.llm_config.knowledge_base_ids.0") != at(clear, "knowledge_bases.0.key") {
		t.Errorf("knowledge_base_ids not rewritten to the export key: %v", at(clear, "agents.0.llm_config.knowledge_base_ids"))
	}
	if at(clear, "numbers.0.inbound_agent") != "support-bot" || at(clear, "numbers.0.outbound_agent") != "sales-bot" {
		t.Errorf("number bindings exported as %v / %v", at(clear, "numbers.0.inbound_agent"), at(clear, "numbers.0.outbound_agent"))
	}
	return clear, raw
}

// checkImportedRecords checks the imported records themselves: ids mapped, versions
// kept (the next publish is version 3), files byte for byte, retrieval works, numbers
// bound, events recorded.
func checkImportedRecords(t *testing.T, dst *env, newKB, newSupport string) {
	t.Helper()
	agent := dst.do("GET", "/api/v1/agents/"+newSupport, dst.Owner.Token, nil)
	expect(t, agent, 200)
	if at(agent.Data(), "llm_config.knowledge_base_ids.0") != newKB || at(agent.Data(), "status") != "published" {
		t.Errorf("imported agent: %s", agent.Body)
	}
	versions := dst.do("GET", "/api/v1/agents/"+newSupport+"/versions", dst.Owner.Token, nil)
	var descs []string
	for _, v := range versions.List() {
		descs = append(descs, v.(map[string]any)["description"].(string))
		if at(v, "llm_config.knowledge_base_ids.0") != newKB {
			t.Errorf("version snapshot knowledge_base_ids = %v", at(v, "llm_config.knowledge_base_ids"))
		}
	}
	if !reflect.DeepEqual(descs, []string{"second", "first"}) {
		t.Errorf("versions = %v", descs)
	}
	expect(t, dst.do("POST", "/api/v1/agents/"+newSupport+"/publish", dst.Owner.Token, nil), 204)
	if v := dst.do("GET", "/api/v1/agents/"+newSupport+"/versions/3", dst.Owner.Token, nil); v.Status != 200 {
		t.Errorf("the next publish after import is not version 3: %d %s", v.Status, v.Body)
	}
	file := items(dst.kb(dst.Owner.Token, newKB), "files")[0]
	_, content := dst.download(dst.Owner.Token, "/api/v1/knowledge-bases/"+newKB+"/sources/files/"+file["id"].(string)+"/content")
	if sha256Of(content) != sha256Of(readTestFile(t, "returns.pdf")) || file["status"] != "indexed" {
		t.Errorf("imported file: status %v, sha256 %s", file["status"], sha256Of(content))
	}
	q := dst.do("POST", "/api/v1/knowledge-bases/"+newKB+"/query", dst.Owner.Token, map[string]any{"query": "gift cards expire"})
	expect(t, q, 200)
	if len(q.List()) == 0 || !strings.Contains(at(q.List(), "0.text").(string), "Gift cards") {
		t.Errorf("query over the imported knowledge base: %s", q.Body)
	}
	nums := dst.do("GET", "/api/v1/numbers?agent_id="+newSupport, dst.Owner.Token, nil)
	if ids := listIDs(t, nums); len(ids) != 1 {
		t.Errorf("numbers bound to the imported agent: %v", ids)
	}
	for _, typ := range []string{"agent.created", "knowledge_base.created", "number.created"} {
		if n := dst.countEvents(dst.Owner.WorkspaceID, typ); n == 0 {
			t.Errorf("no %s event recorded by the import", typ)
		}
	}
}

// checkSecondImportRefused imports raw into dst's workspace again: every number is
// taken, so nothing at all is created, not even the knowledge bases and agents before
// them.
func checkSecondImportRefused(t *testing.T, dst *env, raw []byte) {
	t.Helper()
	ws := dst.Owner.WorkspaceID
	before, files := dst.countWorkspaceRecords(ws), dst.storedFiles()
	r := dst.do("POST", "/api/v1/workspaces/"+ws+"/import", dst.Owner.Token, raw)
	expect(t, r, 409)
	if msg := r.JSON()["message"].(string); !strings.Contains(msg, "+14155550101") || !strings.Contains(msg, "+14155550102") {
		t.Errorf("409 does not name the numbers: %s", msg)
	}
	if after := dst.countWorkspaceRecords(ws); after != before {
		t.Errorf("a refused import changed the workspace")
	}
	if got := dst.storedFiles(); !reflect.DeepEqual(sorted(got), sorted(files)) {
		t.Errorf("a refused import left files: %v, want %v", got, files)
	}
}

func sorted(s []string) []string { s = append([]string(nil), s...); sort.Strings(s); return s }
