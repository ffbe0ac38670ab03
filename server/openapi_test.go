package server_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/voiceapi/voiceapi/server"
)

var update = flag.Bool("update", false, "rewrite docs/openapi.json from the server's document")

// docsFile is the copy of the document kept in the repository.
var docsFile = filepath.Join("..", "docs", "openapi.json")

// openapiServer is a server with no services: the document depends only on the routes.
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
