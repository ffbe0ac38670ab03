package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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

func TestSpreadRoundsThreadsAndConnections(t *testing.T) {
	base := load{Threads: 2, Connections: 32}
	for _, tc := range []struct {
		replicas             []string
		threads, connections int
	}{
		{nil, 2, 32},
		{[]string{"a:1"}, 2, 32},
		{[]string{"a:1", "a:2"}, 2, 32},
		{[]string{"a:1", "a:2", "a:3"}, 3, 33},
		{[]string{"a:1", "a:2", "a:3", "a:4", "a:5"}, 5, 35},
	} {
		l := base.spread(tc.replicas)
		if l.Threads != tc.threads || l.Connections != tc.connections {
			t.Errorf("%d replicas: %d threads, %d connections; want %d, %d", len(tc.replicas), l.Threads, l.Connections, tc.threads, tc.connections)
		}
	}
}

// wrk's threads, pinned by the script's setup(), reach every replica.
func TestWrkReachesEveryReplica(t *testing.T) {
	if err := checkWrk(); err != nil {
		t.Skip(err)
	}
	var hits [3]atomic.Int64
	var addrs []string
	for i := range hits {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits[i].Add(1) }))
		defer srv.Close()
		addrs = append(addrs, strings.TrimPrefix(srv.URL, "http://"))
	}
	l := load{Name: "spread", Method: "GET", Path: "/x/{id}", IDs: []string{"a"}, Token: "1|s", Threads: 2, Connections: 6, Duration: time.Second}.spread(addrs)
	res, err := runWrk("http://"+addrs[0], l, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range hits {
		if hits[i].Load() == 0 {
			t.Errorf("replica %d got no request (%d in all)", i, res.Requests)
		}
	}
}
