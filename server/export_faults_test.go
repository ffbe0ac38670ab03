package server_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/server"
)

// goodDocument is a small valid import document, as a user might write it by hand.
func goodDocument() map[string]any {
	return map[string]any{
		"format": "voiceapi.workspace", "version": 1, "exported_at": "2026-01-02T03:04:05.000Z",
		"workspace": map[string]any{"name": "Hand written", "description": ""},
		"agents": []any{map[string]any{
			"key": "front-desk", "name": "Front desk", "status": "draft", "published_version": nil,
			"llm_config": map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "api_key": "****abcd",
				"knowledge_base_ids": []any{"faq"}, "tools": []any{}},
			"call_config":           map[string]any{"max_call_duration_ms": 600000, "ring_duration_ms": 30000},
			"knowledge_base_config": map[string]any{"chunks_to_retrieve": 3, "similarity_threshold": nil},
			"prompt_config":         map[string]any{"prompt": "Be brief.", "first_speaker": "user", "ai_speak_after_silence": false, "welcome_message_type": "dynamic"},
			"stt_config":            map[string]any{"provider": "deepgram", "model": "nova-3"},
			"tts_config":            map[string]any{"provider": "elevenlabs", "model": "eleven_flash_v2_5", "voice_id": "JBFqnCBsd6RMkjVDRZzb", "streaming_latency": 3, "speaker": nil, "speed": nil, "emotion": nil},
			"versions":              []any{},
		}},
		"knowledge_bases": []any{map[string]any{"key": "faq", "name": "FAQ",
			"texts": []any{map[string]any{"title": "", "content": "We ship worldwide."}}, "urls": []any{}, "files": []any{}}},
		"numbers":  []any{map[string]any{"phone_number": "+14155550199", "nickname": "", "provider": "sip", "inbound_agent": "front-desk", "outbound_agent": nil}},
		"webhooks": []any{},
	}
}

func TestWorkspaceImportHandWrittenDocument(t *testing.T) {
	e := exportEnv(t)
	r := e.do("POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/import", e.Owner.Token, goodDocument())
	expect(t, r, 201)
	// A masked key is not a key: it comes in as null, and the response says where.
	if m := r.Data()["missing_secrets"].([]any); len(m) != 1 || m[0] != "agents.0.llm_config.api_key" {
		t.Errorf("missing_secrets = %v", m)
	}
	a := e.do("GET", "/api/v1/agents/"+at(r.Data(), "agents.0.id").(string), e.Owner.Token, nil)
	expect(t, a, 200)
	if at(a.Data(), "llm_config.api_key") != nil || at(a.Data(), "llm_config.knowledge_base_ids.0") != at(r.Data(), "knowledge_bases.0.id") {
		t.Errorf("imported agent: %s", a.Body)
	}
	// Idempotency-Key replays the first response and creates nothing twice.
	doc := goodDocument()
	doc["numbers"] = []any{}
	first := e.do("POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/import", e.Owner.Token, doc, "Idempotency-Key", "imp-1")
	expect(t, first, 201)
	second := e.do("POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/import", e.Owner.Token, doc, "Idempotency-Key", "imp-1")
	expect(t, second, 201)
	if string(first.Body) != string(second.Body) || e.countEvents(e.Owner.WorkspaceID, "agent.created") != 2 {
		t.Errorf("idempotent replay created again: %d agent.created events", e.countEvents(e.Owner.WorkspaceID, "agent.created"))
	}
}

func TestWorkspaceImportReportsEveryFault(t *testing.T) {
	e := exportEnv(t)
	doc := goodDocument()
	agent := doc["agents"].([]any)[0].(map[string]any)
	agent["llm_config"].(map[string]any)["temperature"] = 5
	agent["llm_config"].(map[string]any)["knowledge_base_ids"] = []any{"nope"}
	agent["status"] = "published" // without a published_version
	agent["versions"] = []any{map[string]any{"version_number": 0, "description": nil, "name": "",
		"created_at": "2026-01-01T00:00:00.000Z", "call_config": agent["call_config"], "knowledge_base_config": agent["knowledge_base_config"],
		"llm_config": agent["llm_config"], "prompt_config": agent["prompt_config"], "stt_config": agent["stt_config"], "tts_config": agent["tts_config"]}}
	twin := map[string]any{}
	for k, v := range agent {
		twin[k] = v
	}
	twin["versions"], twin["status"], twin["llm_config"] = []any{}, "draft", map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile"}
	doc["agents"] = append(doc["agents"].([]any), twin) // same key
	kb := doc["knowledge_bases"].([]any)[0].(map[string]any)
	kb["files"] = []any{map[string]any{"filename": "notes.txt", "content_type": "text/plain",
		"sha256": strings.Repeat("0", 64), "content_base64": base64.StdEncoding.EncodeToString([]byte("Some notes."))}}
	doc["numbers"] = []any{
		map[string]any{"phone_number": "555-0199", "nickname": "", "provider": "sip", "inbound_agent": nil, "outbound_agent": nil},
		map[string]any{"phone_number": "+14155550199", "nickname": "", "provider": "sip", "inbound_agent": "ghost", "outbound_agent": nil},
	}
	doc["webhooks"] = []any{map[string]any{"url": "ftp://example.com", "description": "", "events": []any{"no.such"}, "enabled": true}}
	doc["version"] = 2

	before := e.countWorkspaceRecords(e.Owner.WorkspaceID)
	r := e.do("POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/import", e.Owner.Token, doc)
	expectFields(t, r,
		"version",
		"agents.0.llm_config.temperature",
		"agents.0.llm_config.knowledge_base_ids.0",
		"agents.0.published_version",
		"agents.0.versions.0.version_number",
		"agents.0.versions.0.name",
		"agents.0.versions.0.llm_config.temperature",
		"agents.0.versions.0.llm_config.knowledge_base_ids.0",
		"agents.1.key",
		"knowledge_bases.0.files.0.sha256",
		"numbers.0.phone_number",
		"numbers.1.inbound_agent",
		"webhooks.0.url",
		"webhooks.0.events.0",
	)
	if msg := r.FieldErrors()["agents.0.llm_config.temperature"].([]any)[0].(string); !strings.Contains(msg, "agents.0.llm_config.temperature") {
		t.Errorf("a nested message does not name its full path: %q", msg)
	}
	if after := e.countWorkspaceRecords(e.Owner.WorkspaceID); after != before {
		t.Errorf("a refused import stored something:\nbefore %s\nafter  %s", before, after)
	}
	if files := e.storedFiles(); len(files) != 0 {
		t.Errorf("a refused import left files: %v", files)
	}

	// Wrong shapes are caught by the strict decoder, with their paths, and unknown members too.
	r = e.do("POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/import", e.Owner.Token,
		`{"format": "voiceapi.workspace", "version": 1, "agents": [{"nmae": "x"}], "numbers": 3}`)
	expect(t, r, 422)
	for _, p := range []string{"agents.0.nmae", "numbers"} {
		if _, ok := r.FieldErrors()[p]; !ok {
			t.Errorf("decode faults do not name %s: %v", p, r.FieldErrors())
		}
	}
}

func TestWorkspaceExportImportAccess(t *testing.T) {
	e := exportEnv(t, func(c *server.Config) { c.MaxImportBody = 4 << 10 })
	ws := e.Owner.WorkspaceID
	for _, role := range []string{"member", "developer"} {
		tok := e.member(ws, role+"@example.com", role, nil, nil)
		expect(t, e.do("GET", "/api/v1/workspaces/"+ws+"/export", tok, nil), 403)
		expect(t, e.do("POST", "/api/v1/workspaces/"+ws+"/import", tok, goodDocument()), 403)
	}
	admin := e.member(ws, "admin@example.com", "admin", nil, nil)
	e.export(admin, ws, "")
	// Another user's workspace is not found, not forbidden: its existence stays hidden.
	stranger := e.newUser("stranger@example.com", false)
	expect(t, e.do("GET", "/api/v1/workspaces/"+ws+"/export", stranger.Token, nil), 404)
	expect(t, e.do("GET", "/api/v1/workspaces/"+ws+"/export?include_secrets=maybe", admin, nil), 422)

	big := goodDocument()
	big["workspace"] = map[string]any{"name": "x", "description": strings.Repeat("d", 8<<10)}
	raw, _ := json.Marshal(big)
	expect(t, e.do("POST", "/api/v1/workspaces/"+ws+"/import", admin, raw), 413)
}
