package server

import (
	"testing"

	"github.com/voiceapi/voiceapi/openapi"
)

// TestOpenAPINoStaleDescriptions: every entry of opDocs describes a route that exists, so
// a removed or renamed route does not leave a description behind.
func TestOpenAPINoStaleDescriptions(t *testing.T) {
	s := New(Services{}, Config{})
	routes := map[string]bool{}
	for _, r := range s.Routes() {
		routes[r[0]+" "+r[1]] = true
	}
	for _, key := range openapi.Described() {
		if !routes[key] {
			t.Errorf("opDocs describes %s, which is not a route", key)
		}
	}
}
