package main

import (
	"strings"
	"testing"
	"time"
)

const wrkReport = `Running 3s test @ http://127.0.0.1:41234
  2 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.01ms    1.10ms  24.93ms   90.00%
    Req/Sec    10.00k     1.00k   12.00k    70.00%
  Latency Distribution
     50%  812.00us
     75%    1.50ms
     90%    2.20ms
     99%    1.02s
  59199 requests in 3.00s, 100.00MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 7
Requests/sec:  19733.12
Transfer/sec:     33.33MB
`

func TestParseWrk(t *testing.T) {
	r, err := parseWrk(wrkReport)
	if err != nil {
		t.Fatal(err)
	}
	want := result{RPS: 19733.12, P50: 812 * time.Microsecond, P99: 1020 * time.Millisecond, Requests: 59199, Non2xx: 7, Errors: 3}
	if r != want {
		t.Fatalf("got %+v, want %+v", r, want)
	}
	if _, err := parseWrk("garbage"); err == nil {
		t.Fatal("a report without Requests/sec is accepted")
	}
}

func TestLuaScriptSplitsTheBodyAtTheName(t *testing.T) {
	s := luaScript(load{Method: "PUT", Path: "/api/v1/agents/{id}", IDs: []string{"agt_1", "agt_2"}, Body: `{"name":"` + nameMark + `","x":1}`, Token: "1|abc"})
	for _, want := range []string{`local body_pre = [==[{"name":"]==]`, `local body_post = [==[","x":1}]==]`, `"agt_1", "agt_2"`, `"Bearer 1|abc"`} {
		if !strings.Contains(s, want) {
			t.Fatalf("script lacks %s:\n%s", want, s)
		}
	}
}
