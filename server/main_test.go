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
// not list (documented_status_test.go), or a JSON body its schema for that status does
// not describe (documented_bodies_test.go); it stops the throw-away PostgreSQL cluster the
// tests started when they run on PostgreSQL (VOICEAPI_TEST_BACKEND=postgres).
func TestMain(m *testing.M) {
	served := newServedStatuses()
	server.ObserveServed(served.record)
	doc, err := server.New(server.Services{}, server.Config{}).OpenAPI()
	if err != nil {
		fmt.Println("FAIL: the OpenAPI document:", err)
		os.Exit(1)
	}
	answered, err := newAnsweredBodies(doc)
	if err != nil {
		fmt.Println("FAIL: reading the OpenAPI document:", err)
		os.Exit(1)
	}
	server.ObserveAnswers(answered.record)
	code := pgtest.Run(m)
	if misfits := answered.misfits(); len(misfits) > 0 {
		fmt.Println("FAIL: answers whose JSON body does not match their operation's schema in the OpenAPI document")
		fmt.Println("(fix the route's answer, or its schema in openapi/, then go generate ./server):")
		for _, f := range misfits {
			fmt.Println("\t" + f)
		}
		code = 1
	}
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
