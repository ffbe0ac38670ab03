package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
)

// unknownKBID is well formed but names no knowledge base.
const unknownKBID = "kb_01JD6ZZZZZZZZZZZZZZZZZZZZZ"

func TestKnowledgeBaseFilesIndexedAndDownloadedByteForByte(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	kb := e.createKB(tok, map[string]any{"name": "Returns"})
	id := kb["id"].(string)
	if !strings.HasPrefix(id, "kb_") || kb["workspace_id"] != e.Owner.WorkspaceID || len(items(kb, "files")) != 0 {
		t.Fatalf("created record: %v", kb)
	}

	got := uploadThreeFiles(t, e, id)
	checkEachFileRetrieved(t, e, id)
	checkFileSourceDeleted(t, e, id, got[0]["id"].(string))
}

// uploadThreeFiles uploads a text, a PDF and a Word file (one under a path, sanitized)
// to knowledge base id, checks each is indexed and downloads byte for byte with its
// type, and returns the files' records.
func uploadThreeFiles(t *testing.T, e *env, id string) []map[string]any {
	t.Helper()
	tok := e.Owner.Token
	files := map[string][]byte{
		"returns.txt":  readTestFile(t, "returns.txt"),
		"returns.pdf":  readTestFile(t, "returns.pdf"),
		"returns.docx": readTestFile(t, "returns.docx"),
	}
	r := e.addParts(tok, id,
		part{"files", "returns.txt", files["returns.txt"]},
		part{"files[]", "returns.pdf", files["returns.pdf"]},
		part{"files", "../../etc/returns.docx", files["returns.docx"]})
	expect(t, r, 200)
	got := items(r.Data(), "files")
	if len(got) != 3 {
		t.Fatalf("files: %v", r.Data()["files"])
	}
	wantType := map[string]string{
		"returns.txt":  "text/plain; charset=utf-8",
		"returns.pdf":  "application/pdf",
		"returns.docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	}
	for _, f := range got {
		name := f["filename"].(string)
		content, ok := files[name]
		if !ok {
			t.Fatalf("filename %q is not one sent (sanitized)", name)
		}
		if f["status"] != "indexed" || f["error"] != nil || f["indexed_at"] == nil {
			t.Errorf("%s: status %v, error %v, indexed_at %v", name, f["status"], f["error"], f["indexed_at"])
		}
		if f["sha256"] != sha256Of(content) || f["size_bytes"] != float64(len(content)) || f["content_type"] != wantType[name] {
			t.Errorf("%s: sha256 %v size %v type %v", name, f["sha256"], f["size_bytes"], f["content_type"])
		}
		resp, body := e.download(tok, "/api/v1/knowledge-bases/"+id+"/sources/files/"+f["id"].(string)+"/content")
		if resp.StatusCode != 200 || sha256Of(body) != sha256Of(content) {
			t.Fatalf("%s: download status %d, %d bytes", name, resp.StatusCode, len(body))
		}
		if resp.Header.Get("Content-Type") != wantType[name] || !strings.Contains(resp.Header.Get("Content-Disposition"), `filename=`+name) {
			t.Errorf("%s: headers %v", name, resp.Header)
		}
	}
	return got
}

// checkEachFileRetrieved checks all three were extracted: the refund window is found in
// each, and each was reported indexed.
func checkEachFileRetrieved(t *testing.T, e *env, id string) {
	t.Helper()
	tok := e.Owner.Token
	r := e.do("POST", "/api/v1/knowledge-bases/"+id+"/query", tok, map[string]any{"query": "refund within 30 days", "chunks_to_retrieve": 10})
	expect(t, r, 200)
	sources := map[string]bool{}
	for _, h := range r.List() {
		sources[h.(map[string]any)["source_id"].(string)] = true
		if h.(map[string]any)["source_type"] != "files" {
			t.Errorf("hit %v", h)
		}
	}
	if len(sources) != 3 {
		t.Errorf("query hit %d of the 3 files: %s", len(sources), r.Body)
	}
	if n := strings.Count(strings.Join(e.eventTypes(e.Owner.WorkspaceID), ","), "knowledge_base.source_indexed"); n != 3 {
		t.Errorf("%d source_indexed events, want 3", n)
	}
}

// checkFileSourceDeleted deletes the file source fileID: its file leaves the disk, its
// chunks retrieval.
func checkFileSourceDeleted(t *testing.T, e *env, id, fileID string) {
	t.Helper()
	tok := e.Owner.Token
	r := e.do("DELETE", "/api/v1/knowledge-bases/"+id+"/sources/delete/files/"+fileID, tok, nil)
	expect(t, r, 200)
	if len(items(r.Data(), "files")) != 2 || !testkit.OnPostgres() && len(e.storedFiles()) != 2 {
		t.Errorf("after delete: %d items, %d files on disk", len(items(r.Data(), "files")), len(e.storedFiles()))
	}
	expect(t, e.do("GET", "/api/v1/knowledge-bases/"+id+"/sources/files/"+fileID+"/content", tok, nil), 404)
	r = e.do("POST", "/api/v1/knowledge-bases/"+id+"/query", tok, map[string]any{"query": "refund within 30 days", "chunks_to_retrieve": 10})
	for _, h := range r.List() {
		if h.(map[string]any)["source_id"] == fileID {
			t.Errorf("a deleted source is still retrieved: %v", h)
		}
	}
	expect(t, e.do("DELETE", "/api/v1/knowledge-bases/"+id+"/sources/delete/files/"+fileID, tok, nil), 404)
	expectFields(t, e.do("DELETE", "/api/v1/knowledge-bases/"+id+"/sources/delete/videos/"+fileID, tok, nil), "source_type")
}

func TestKnowledgeBaseUploadLimitsStoreNothing(t *testing.T) {
	e := newKBEnv(t, kbEnvOptions{server: server.Config{MaxFileSize: 1024, MaxMultipartBody: 4096}})
	tok := e.Owner.Token
	id := e.createKB(tok, map[string]any{"name": "Limits"})["id"].(string)
	small := []byte("Opening hours are nine to five.\n")
	before := e.kb(tok, id)

	// A file over the per-file limit: 413, nothing stored even though a valid file came first.
	r := e.addParts(tok, id, part{"files", "ok.txt", small}, part{"files", "big.txt", []byte(strings.Repeat("a", 1025))})
	expect(t, r, 413)
	if r.Code() != "payload_too_large" || !strings.Contains(r.JSON()["message"].(string), "files.1") {
		t.Errorf("413 body: %s", r.Body)
	}
	// A request over the multipart limit, made of files each under theirs.
	parts := []part{}
	for i := range 5 {
		parts = append(parts, part{"files", fmt.Sprintf("f%d.txt", i), []byte(strings.Repeat("b", 1000))})
	}
	expect(t, e.addParts(tok, id, parts...), 413)
	// An unsupported file: 422 naming its part, and the valid one beside it is not stored.
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)
	r = e.addParts(tok, id, part{"files", "ok.txt", small}, part{"files", "photo.png", png})
	expectFields(t, r, "files.1")
	// Unknown parts and bad texts or urls are named too, all at once.
	r = e.addParts(tok, id, part{"file", "x.txt", small}, part{"texts", "", []byte("  ")}, part{"urls", "", []byte("ftp://example.com/")})
	expectFields(t, r, "file", "texts.0.content", "urls.0")

	if after := e.kb(tok, id); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("refused requests changed the record:\n%v\n%v", before, after)
	}
	if f := e.storedFiles(); len(f) != 0 {
		t.Errorf("refused requests left files on disk: %v", f)
	}
	// Sent as some other media type: 415.
	expect(t, e.do("POST", "/api/v1/knowledge-bases/"+id+"/sources/add", tok, "x", "Content-Type", "text/plain"), 415)
}

func TestKnowledgeBaseSourcesPerKnowledgeBaseLimit(t *testing.T) {
	e := newKBEnv(t, kbEnvOptions{})
	tok := e.Owner.Token
	id := e.createKB(tok, map[string]any{"name": "Many"})["id"].(string)
	texts := make([]map[string]any, 100)
	for i := range texts {
		texts[i] = map[string]any{"content": fmt.Sprintf("fact number %d", i)}
	}
	for range 10 {
		expect(t, e.do("POST", "/api/v1/knowledge-bases/"+id+"/sources/add", tok, map[string]any{"texts": texts}), 200)
	}
	r := e.do("POST", "/api/v1/knowledge-bases/"+id+"/sources/add", tok, map[string]any{"texts": texts[:1]})
	expectFields(t, r, "texts")
	if n := len(items(e.kb(tok, id), "texts")); n != 1000 {
		t.Errorf("%d texts, want 1000", n)
	}
}

func TestKnowledgeBaseCRUDAndEvents(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	kb := e.createKB(tok, map[string]any{
		"name":  "Support",
		"texts": []map[string]any{{"title": "Hours", "content": "We are open nine to five on weekdays."}},
		"urls":  []string{"https://example.com/faq"},
	})
	id := kb["id"].(string)
	texts, urls := items(kb, "texts"), items(kb, "urls")
	if len(texts) != 1 || texts[0]["title"] != "Hours" || texts[0]["content"] == nil || !strings.HasPrefix(texts[0]["id"].(string), "src_") {
		t.Errorf("texts: %v", kb["texts"])
	}
	if len(urls) != 1 || urls[0]["status"] != "pending" || urls[0]["url"] != "https://example.com/faq" || urls[0]["indexed_at"] != nil {
		t.Errorf("urls: %v", kb["urls"])
	}

	// Validation names every fault and stores nothing.
	r := e.do("POST", "/api/v1/knowledge-bases", tok, map[string]any{
		"texts": []map[string]any{{"title": strings.Repeat("t", 256), "content": ""}},
		"urls":  []string{"http://user:pw@example.com/", "not a url"}, "nmae": "x",
	})
	expectFields(t, r, "name", "nmae", "texts.0.title", "texts.0.content", "urls.0", "urls.1")
	expect(t, e.do("POST", "/api/v1/knowledge-bases", tok, "{", "Content-Type", "application/json"), 400)

	r = e.do("GET", "/api/v1/knowledge-bases", tok, nil)
	expect(t, r, 200)
	if len(r.List()) != 1 || r.Meta()["per_page"] != float64(15) {
		t.Errorf("list: %s", r.Body)
	}
	expectFields(t, e.do("GET", "/api/v1/knowledge-bases?per_page=0", tok, nil), "per_page")

	// Update with a stale If-Match is 412 and changes nothing; with the current one, 200.
	shown := e.do("GET", "/api/v1/knowledge-bases/"+id, tok, nil)
	etag := shown.Header.Get("ETag")
	expect(t, e.do("PUT", "/api/v1/knowledge-bases/"+id, tok, map[string]any{"name": "x"}, "If-Match", `"stale"`), 412)
	expectFields(t, e.do("PUT", "/api/v1/knowledge-bases/"+id, tok, map[string]any{"name": ""}), "name")
	r = e.do("PUT", "/api/v1/knowledge-bases/"+id, tok, map[string]any{"name": "Support desk"}, "If-Match", etag)
	expect(t, r, 200)
	if r.Data()["name"] != "Support desk" || r.Header.Get("ETag") == etag {
		t.Errorf("updated: %s", r.Body)
	}

	// An agent refers to it; deleting the knowledge base drops it from the agent.
	other := e.createKB(tok, map[string]any{"name": "Other"})["id"].(string)
	agent := e.createAgent(tok, map[string]any{"name": "Bot", "llm_config": map[string]any{"knowledge_base_ids": []string{id, other}}})
	expect(t, e.do("DELETE", "/api/v1/knowledge-bases/"+id, tok, nil, "If-Match", etag), 412)
	expect(t, e.do("DELETE", "/api/v1/knowledge-bases/"+id, tok, nil), 204)
	expect(t, e.do("GET", "/api/v1/knowledge-bases/"+id, tok, nil), 404)
	a, _ := e.agent(tok, agent["id"].(string))
	if ids := path(a, "llm_config.knowledge_base_ids"); fmt.Sprint(ids) != fmt.Sprint([]any{other}) {
		t.Errorf("agent knowledge_base_ids after delete: %v", ids)
	}
	types := e.eventTypes(e.Owner.WorkspaceID)
	for _, want := range []string{"knowledge_base.created", "knowledge_base.updated", "knowledge_base.deleted", "knowledge_base.source_indexed"} {
		if !slices.Contains(types, want) {
			t.Errorf("no %s event among %v", want, types)
		}
	}
}

func TestKnowledgeBaseAccessAndIsolation(t *testing.T) {
	e := newEnv(t)
	id := e.createKB(e.Owner.Token, map[string]any{"name": "Private", "texts": []map[string]any{{"content": "The vault code is blue."}}})["id"].(string)
	kbPath := "/api/v1/knowledge-bases/" + id

	member := e.addMember(e.newUser("member@example.com", false), "member", nil, nil)
	expect(t, e.do("GET", kbPath, member, nil), 200)
	expect(t, e.do("POST", kbPath+"/query", member, map[string]any{"query": "vault code"}), 200)
	expect(t, e.do("PUT", kbPath, member, map[string]any{"name": "x"}), 403)
	expect(t, e.do("POST", "/api/v1/knowledge-bases", member, map[string]any{"name": "x"}), 403)
	expect(t, e.do("POST", kbPath+"/sources/add", member, map[string]any{"texts": []map[string]any{{"content": "x"}}}), 403)
	expect(t, e.do("DELETE", kbPath, member, nil), 403)

	dev := e.addMember(e.newUser("dev@example.com", false), "developer", []string{"agents"}, nil)
	for _, r := range []*response{
		e.do("GET", "/api/v1/knowledge-bases", dev, nil),
		e.do("GET", kbPath, dev, nil),
		e.do("POST", kbPath+"/query", dev, map[string]any{"query": "vault"}),
	} {
		expect(t, r, 403)
	}

	stranger := e.newUser("stranger@example.com", false)
	for _, r := range []*response{
		e.do("GET", kbPath, stranger.Token, nil),
		e.do("PUT", kbPath, stranger.Token, map[string]any{"name": "mine"}),
		e.do("DELETE", kbPath, stranger.Token, nil),
		e.do("POST", kbPath+"/query", stranger.Token, map[string]any{"query": "vault"}),
		e.do("POST", kbPath+"/sources/add", stranger.Token, map[string]any{"texts": []map[string]any{{"content": "x"}}}),
	} {
		expect(t, r, 404)
	}
	r := e.do("GET", "/api/v1/knowledge-bases", stranger.Token, nil)
	if len(r.List()) != 0 {
		t.Errorf("a stranger lists %s", r.Body)
	}
	// A stranger's agent cannot name this knowledge base either.
	r = e.do("POST", "/api/v1/agents", stranger.Token, map[string]any{"name": "x", "llm_config": map[string]any{"knowledge_base_ids": []string{id}}})
	expectFields(t, r, "llm_config.knowledge_base_ids.0")
	expect(t, e.do("GET", "/api/v1/knowledge-bases/"+unknownKBID, e.Owner.Token, nil), 404)
}

func TestKnowledgeBaseQuery(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	var texts []map[string]any
	for _, s := range []string{
		"Our store opens at nine in the morning and closes at six in the evening.",
		"Parcels ship within two business days; express shipping arrives the next day.",
		"Refunds are paid to the original card within five business days.",
		"Pets are welcome in the garden area but not inside the store.",
		"Gift cards never expire and can be used online or in the store.",
		"The store closes early at four on public holidays.",
	} {
		texts = append(texts, map[string]any{"content": s})
	}
	id := e.createKB(tok, map[string]any{"name": "FAQ", "texts": texts})["id"].(string)
	q := func(body map[string]any) []map[string]any {
		t.Helper()
		r := e.do("POST", "/api/v1/knowledge-bases/"+id+"/query", tok, body)
		expect(t, r, 200)
		var out []map[string]any
		for _, h := range r.List() {
			out = append(out, h.(map[string]any))
		}
		return out
	}
	hits := q(map[string]any{"query": "when does the store close", "chunks_to_retrieve": 2})
	if len(hits) == 0 || len(hits) > 2 {
		t.Fatalf("%d hits for chunks_to_retrieve 2", len(hits))
	}
	if !strings.Contains(hits[0]["text"].(string), "closes") {
		t.Errorf("best hit: %v", hits[0])
	}
	all := q(map[string]any{"query": "store business days", "chunks_to_retrieve": 10})
	for i, h := range all {
		s := h["score"].(float64)
		if s < 0 || s > 1 {
			t.Errorf("score %v outside [0, 1]", s)
		}
		if i > 0 && s > all[i-1]["score"].(float64) {
			t.Errorf("hit %d scores %v above the one before (%v)", i, s, all[i-1]["score"])
		}
		for _, k := range []string{"chunk_id", "source_id", "source_type", "text"} {
			if h[k] == nil || h[k] == "" {
				t.Errorf("hit lacks %s: %v", k, h)
			}
		}
	}
	if len(all) < 3 {
		t.Fatalf("only %d hits for a broad query", len(all))
	}
	// A threshold between the scores keeps only those at or above it.
	mid := all[len(all)/2]["score"].(float64)
	if mid >= 0.30 && mid <= 0.95 {
		for _, h := range q(map[string]any{"query": "store business days", "chunks_to_retrieve": 10, "similarity_threshold": mid}) {
			if h["score"].(float64) < mid {
				t.Errorf("hit under the threshold %v: %v", mid, h)
			}
		}
	}
	for _, h := range q(map[string]any{"query": "store business days", "chunks_to_retrieve": 10, "similarity_threshold": 0.95}) {
		if h["score"].(float64) < 0.95 {
			t.Errorf("hit under 0.95: %v", h)
		}
	}
	if len(q(map[string]any{"query": "quantum chromodynamics"})) != 0 {
		t.Errorf("an unrelated query found chunks")
	}
	p := "/api/v1/knowledge-bases/" + id + "/query"
	expectFields(t, e.do("POST", p, tok, map[string]any{"query": "x", "chunks_to_retrieve": 11, "similarity_threshold": 0.2}), "chunks_to_retrieve", "similarity_threshold")
	expectFields(t, e.do("POST", p, tok, map[string]any{"query": strings.Repeat("q", 1001)}), "query")
	expectFields(t, e.do("POST", p, tok, map[string]any{}), "query")
	expectFields(t, e.do("POST", p, tok, map[string]any{"query": "x", "chunks_to_retrieve": nil}), "chunks_to_retrieve")
	expect(t, e.do("POST", "/api/v1/knowledge-bases/"+unknownKBID+"/query", tok, map[string]any{"query": "x"}), 404)
}

func TestAgentKnowledgeQuery(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	hours := e.createKB(tok, map[string]any{"name": "Hours", "texts": []map[string]any{{"content": "The store opens at nine and closes at six."}}})["id"].(string)
	pets := e.createKB(tok, map[string]any{"name": "Pets", "texts": []map[string]any{{"content": "Dogs are welcome in the garden of the store."}}})["id"].(string)
	agent := e.createAgent(tok, map[string]any{"name": "Bot",
		"knowledge_base_config": map[string]any{"chunks_to_retrieve": 1},
		"llm_config":            map[string]any{"knowledge_base_ids": []string{hours, pets}}})
	agentID := agent["id"].(string)
	r := e.do("POST", "/api/v1/agents/"+agentID+"/knowledge/query", tok, map[string]any{"query": "are dogs welcome in the store"})
	expect(t, r, 200)
	if len(r.List()) != 1 || !strings.Contains(path(r.JSON(), "data.0.text").(string), "Dogs") {
		t.Fatalf("agent query: %s", r.Body)
	}
	// Both knowledge bases are searched.
	expect(t, e.do("PUT", "/api/v1/agents/"+agentID, tok, map[string]any{"knowledge_base_config": map[string]any{"chunks_to_retrieve": 5}}), 200)
	r = e.do("POST", "/api/v1/agents/"+agentID+"/knowledge/query", tok, map[string]any{"query": "store"})
	if len(r.List()) != 2 {
		t.Errorf("query over two knowledge bases: %s", r.Body)
	}
	// A member limited to other agents does not see this one; one without the module is 403.
	other := e.createAgent(tok, map[string]any{"name": "Other"})["id"].(string)
	limited := e.addMember(e.newUser("limited@example.com", false), "developer", nil, []string{other})
	expect(t, e.do("POST", "/api/v1/agents/"+agentID+"/knowledge/query", limited, map[string]any{"query": "store"}), 404)
	noKB := e.addMember(e.newUser("nokb@example.com", false), "developer", []string{"agents"}, nil)
	expect(t, e.do("POST", "/api/v1/agents/"+agentID+"/knowledge/query", noKB, map[string]any{"query": "store"}), 403)
	expect(t, e.do("POST", "/api/v1/agents/"+unknownAgentID+"/knowledge/query", tok, map[string]any{"query": "store"}), 404)
	expectFields(t, e.do("POST", "/api/v1/agents/"+agentID+"/knowledge/query", tok, map[string]any{"query": ""}), "query")
}

// pageServer serves an HTML page on loopback.
func pageServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><script>var secret = "scriptword";</script><style>.x{}</style></head>
<body><h1>Delivery</h1><p>Orders above fifty euros ship free of charge to every country.</p></body></html>`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func urlItem(t *testing.T, e *env, kbID string) map[string]any {
	t.Helper()
	u := items(e.kb(e.Owner.Token, kbID), "urls")
	if len(u) != 1 {
		t.Fatalf("urls: %v", u)
	}
	return u[0]
}

func TestKnowledgeURLOnLoopbackRefusedWithoutAllowPrivate(t *testing.T) {
	page := pageServer(t)
	e := newKBEnv(t, kbEnvOptions{fetcher: true})
	id := e.createKB(e.Owner.Token, map[string]any{"name": "Web", "urls": []string{page.URL + "/delivery"}})["id"].(string)
	eventually(t, "the url source to fail", func() bool { return urlItem(t, e, id)["status"] == "failed" })
	u := urlItem(t, e, id)
	if msg, _ := u["error"].(string); !strings.Contains(msg, "127.0.0.1") || !strings.Contains(msg, "not allowed") {
		t.Errorf("error %q does not name the refused address", msg)
	}
	if !slices.Contains(e.eventTypes(e.Owner.WorkspaceID), "knowledge_base.source_failed") {
		t.Errorf("no source_failed event")
	}
}

func TestKnowledgeURLFetchedAndIndexedWithAllowPrivate(t *testing.T) {
	page := pageServer(t)
	// The url is stored before the fetcher runs: it must find it when it starts.
	e, startJobs := newKBEnvServer(t, kbEnvOptions{server: server.Config{AllowPrivateURLs: true}})
	id := e.createKB(e.Owner.Token, map[string]any{"name": "Web", "urls": []string{page.URL + "/delivery"}})["id"].(string)
	if s := urlItem(t, e, id)["status"]; s != "pending" {
		t.Fatalf("status before the fetcher runs: %v", s)
	}
	t.Cleanup(startJobs(t.Context()))
	eventually(t, "the url source to be indexed", func() bool { return urlItem(t, e, id)["status"] == "indexed" })
	u := urlItem(t, e, id)
	if u["error"] != nil || u["indexed_at"] == nil {
		t.Errorf("indexed item: %v", u)
	}
	r := e.do("POST", "/api/v1/knowledge-bases/"+id+"/query", e.Owner.Token, map[string]any{"query": "free shipping fifty euros"})
	if len(r.List()) != 1 || path(r.JSON(), "data.0.source_type") != "urls" {
		t.Fatalf("query: %s", r.Body)
	}
	r = e.do("POST", "/api/v1/knowledge-bases/"+id+"/query", e.Owner.Token, map[string]any{"query": "scriptword"})
	if len(r.List()) != 0 {
		t.Errorf("script content was indexed: %s", r.Body)
	}
	// Refetch: 202, pending, then indexed again; an unknown url source is 404.
	r = e.do("POST", "/api/v1/knowledge-bases/"+id+"/sources/urls/"+u["id"].(string)+"/refetch", e.Owner.Token, nil)
	expect(t, r, 202)
	if s := items(r.Data(), "urls")[0]["status"]; s != "pending" {
		t.Errorf("status after refetch: %v", s)
	}
	eventually(t, "the refetched source to be indexed", func() bool { return urlItem(t, e, id)["status"] == "indexed" })
	expect(t, e.do("POST", "/api/v1/knowledge-bases/"+id+"/sources/urls/src_01JD6ZZZZZZZZZZZZZZZZZZZZZ/refetch", e.Owner.Token, nil), 404)
}

func TestKnowledgeUnreadableFileFailsWithReason(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	id := e.createKB(tok, map[string]any{"name": "Broken"})["id"].(string)
	damaged := []byte("%PDF-1.7\nthis is not really a PDF body\n%%EOF\n")
	r := e.addParts(tok, id, part{"files", "broken.pdf", damaged})
	expect(t, r, 200)
	f := items(r.Data(), "files")[0]
	if f["status"] != "failed" || f["error"] == nil || f["error"] == "" || f["indexed_at"] != nil {
		t.Fatalf("damaged PDF item: %v", f)
	}
	// The original is still kept, byte for byte, and the failure is an event.
	resp, body := e.download(tok, "/api/v1/knowledge-bases/"+id+"/sources/files/"+f["id"].(string)+"/content")
	if resp.StatusCode != 200 || string(body) != string(damaged) {
		t.Errorf("download of a failed source: %d %q", resp.StatusCode, body)
	}
	if !slices.Contains(e.eventTypes(e.Owner.WorkspaceID), "knowledge_base.source_failed") {
		t.Errorf("no source_failed event")
	}
}
