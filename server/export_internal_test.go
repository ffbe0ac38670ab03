package server

import "net/http"

// ObserveServed makes f see every request any server of this test binary answers (see
// testHookServed). TestMain calls it before the tests run, so no request races with it.
func ObserveServed(f func(r *http.Request, route string, status int)) { testHookServed = f }
