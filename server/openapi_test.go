package server_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/validate"
)

var update = flag.Bool("update", false, "rewrite docs/openapi.json from the server's document")

// docsFile is the copy of the document kept in the repository.
var docsFile = filepath.Join("..", "docs", "openapi.json")

// openapiDocument builds the document of a server with no services: it depends only on
// the routes.
func openapiDocument(t *testing.T) ([]byte, map[string]any) {
	t.Helper()
	s := server.New(server.Services{}, server.Config{})
	body, err := s.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	return body, doc
}

// TestOpenAPIDocsFile fails when docs/openapi.json is not what the server serves. Run
// `go generate ./server` (or this test with -update, or VOICEAPI_UPDATE_OPENAPI=1) to
// rewrite it.
func TestOpenAPIDocsFile(t *testing.T) {
	body, _ := openapiDocument(t)
	if *update || os.Getenv("VOICEAPI_UPDATE_OPENAPI") == "1" {
		if err := os.WriteFile(docsFile, body, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	stored, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatalf("%v; run go generate ./server", err)
	}
	if !bytes.Equal(stored, body) {
		t.Fatalf("docs/openapi.json is stale; run go generate ./server")
	}
}

// TestOpenAPIServedEqualsDocsFile: GET /api/v1/openapi.json serves, without a token, the
// bytes of docs/openapi.json, with an ETag that gives 304 when sent back.
func TestOpenAPIServedEqualsDocsFile(t *testing.T) {
	s := server.New(server.Services{}, server.Config{RateLimit: 5})
	h := s.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	stored, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec.Body.Bytes(), stored) {
		t.Fatal("the served document differs from docs/openapi.json; run go generate ./server")
	}
	etag := rec.Header().Get("ETag")
	req := httptest.NewRequest("GET", "/api/v1/openapi.json", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if etag == "" || rec.Code != http.StatusNotModified {
		t.Fatalf("If-None-Match %q: status %d, want 304", etag, rec.Code)
	}
}

// TestOpenAPICoversEveryRoute walks the router: every route is in the document, and the
// document names no route that does not exist.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	_, doc := openapiDocument(t)
	s := server.New(server.Services{}, server.Config{})
	routes := map[string]bool{}
	for _, r := range s.Routes() {
		key := r[0] + " " + r[1]
		if routes[key] {
			t.Errorf("route %s is registered twice", key)
		}
		routes[key] = true
	}
	documented := map[string]bool{}
	opIDs := map[string]string{}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			key := strings.ToUpper(method) + " " + path
			documented[key] = true
			if !routes[key] {
				t.Errorf("the document describes %s, which is not a route", key)
			}
			id, _ := op.(map[string]any)["operationId"].(string)
			if prev, dup := opIDs[id]; dup || id == "" {
				t.Errorf("operationId %q of %s is empty or also %s's", id, key, prev)
			}
			opIDs[id] = key
		}
	}
	for key := range routes {
		if !documented[key] {
			t.Errorf("route %s is missing from the document (add it to opDocs in openapi/routes.go)", key)
		}
	}
	if len(routes) == 0 {
		t.Fatal("no routes")
	}
}

// TestOpenAPIBounds checks a sample of the document's bounds against the spec's numbers
// and validate's constants.
func TestOpenAPIBounds(t *testing.T) {
	_, doc := openapiDocument(t)
	schemas := dig(t, doc, "components", "schemas").(map[string]any)
	prop := func(schema, field string) map[string]any {
		t.Helper()
		return dig(t, schemas, schema, "properties", field).(map[string]any)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"max_call_duration_ms minimum", prop("CallConfigInput", "max_call_duration_ms")["minimum"], 60000.0},
		{"max_call_duration_ms maximum", prop("CallConfigInput", "max_call_duration_ms")["maximum"], 7200000.0},
		{"ring_duration_ms minimum", prop("CallConfigInput", "ring_duration_ms")["minimum"], 5000.0},
		{"ring_duration_ms maximum", prop("CallConfigInput", "ring_duration_ms")["maximum"], 300000.0},
		{"similarity_threshold minimum", prop("KnowledgeBaseConfigInput", "similarity_threshold")["minimum"], 0.30},
		{"similarity_threshold maximum", prop("KnowledgeBaseConfigInput", "similarity_threshold")["maximum"], 0.95},
		{"temperature minimum", prop("LLMConfigInput", "temperature")["minimum"], 0.0},
		{"temperature maximum", prop("LLMConfigInput", "temperature")["maximum"], 1.0},
		{"per_page minimum", dig(t, doc, "components", "parameters", "PerPage", "schema", "minimum"), 1.0},
		{"per_page maximum", dig(t, doc, "components", "parameters", "PerPage", "schema", "maximum"), 100.0},
		{"per_page maximum = server.MaxPerPage", dig(t, doc, "components", "parameters", "PerPage", "schema", "maximum"), float64(server.MaxPerPage)},
		{"publish description maxLength", prop("PublishRequest", "description")["maxLength"], 1000.0},
		{"publish description = validate.MaxPublishDescription", prop("PublishRequest", "description")["maxLength"], float64(validate.MaxPublishDescription)},
		{"agent name maxLength", prop("AgentCreate", "name")["maxLength"], float64(validate.MaxAgentName)},
		{"tool hold_audio maxLength", prop("ToolInput", "hold_audio")["maxLength"], 50.0},
		{"tool pause_detection_delay_ms maximum", prop("ToolInput", "pause_detection_delay_ms")["maximum"], 6000.0},
		{"streaming_latency maximum", prop("TTSConfigInput", "streaming_latency")["maximum"], 4.0},
		{"ai_speak_wait_time maximum", prop("PromptConfigInput", "ai_speak_wait_time")["maximum"], 5.0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: document says %v, want %v", c.what, c.got, c.want)
		}
	}
	if got := fmt.Sprint(prop("LLMConfigInput", "provider")["enum"]); got != fmt.Sprint(data.LLMProviders) || got != "[internal azure mistral bedrock_claude groq]" {
		t.Errorf("llm provider enum: %s", got)
	}
	// Nullable fields accept null through a type array; unknown members are refused.
	if got := fmt.Sprint(prop("LLMConfigInput", "api_key")["type"]); got != "[string null]" {
		t.Errorf("llm_config.api_key type %s, want [string null]", got)
	}
	if got := dig(t, schemas, "AgentUpdate", "additionalProperties"); got != false {
		t.Errorf("AgentUpdate additionalProperties %v, want false", got)
	}
	if got := fmt.Sprint(dig(t, schemas, "ToolInput", "required")); got != "[name type]" {
		t.Errorf("tool required %s, want [name type]", got)
	}
}

// dig follows keys through nested objects.
func dig(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok || m[k] == nil {
			t.Fatalf("no %s in the document (path %v)", k, keys)
		}
		v = m[k]
	}
	return v
}
