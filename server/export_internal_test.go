package server

import (
	"net/http"
	"testing"
)

// ObserveServed makes f see every request any server of this test binary answers (see
// testHookServed). TestMain calls it before the tests run, so no request races with it.
func ObserveServed(f func(r *http.Request, route string, status int)) { testHookServed = f }

// ObserveAnswers makes f see every answer with its headers and body (see
// testHookAnswered). TestMain calls it before the tests run.
func ObserveAnswers(f func(r *http.Request, route string, status int, header http.Header, body []byte, truncated bool)) {
	testHookAnswered = f
}

// BeforeKeepingAnswer makes f run between a request's committed change and the keeping
// of its Idempotency-Key's answer (see testHookBeforeKeep), until t ends.
func BeforeKeepingAnswer(t testing.TB, f func(r *http.Request)) {
	testHookBeforeKeep.Store(&f)
	t.Cleanup(func() { testHookBeforeKeep.Store(nil) })
}
