package server_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/server"
)

// TestMain records every answer of every server the tests start and, once they are done,
// fails the run when a route answered a status its operation in the OpenAPI document does
// not list (documented_status_test.go); it stops the throw-away PostgreSQL cluster the
// tests started when they run on PostgreSQL (VOICEAPI_TEST_BACKEND=postgres).
func TestMain(m *testing.M) {
	served := newServedStatuses()
	server.ObserveServed(served.record)
	code := pgtest.Run(m)
	if faults, err := served.undocumented(); err != nil || len(faults) > 0 {
		fmt.Println("FAIL: answers with a status the OpenAPI document does not list for their operation")
		fmt.Println("(add it to the route's Errors in openapi/routes.go, or fix the route, then go generate ./server):")
		if err != nil {
			fmt.Println("\t" + err.Error())
		}
		for _, f := range faults {
			fmt.Println("\t" + f)
		}
		code = 1
	}
	os.Exit(code)
}
