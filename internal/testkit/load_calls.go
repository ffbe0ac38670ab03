package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// loadClient keeps a connection per client: a load measures the server, not dialing.
var loadClient = &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}

// Send makes one request for a load and checks its status; it returns the body.
func Send(method, url, token string, body []byte, status int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := loadClient.Do(req)
	if err != nil {
		return nil, err
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		return nil, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, got)
	}
	return got, nil
}

// BenchClients is how many requests a load keeps in flight: VOICEAPI_BENCH_CLIENTS, 16.
func BenchClients() int { return envInt("VOICEAPI_BENCH_CLIENTS", 16) }

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// CallStartBench runs the loads of the call-start benchmark against servers, one or more
// replicas of one database (client c talks to servers[c % len]): GET agent, a call
// registration, a call start, and a call start under concurrency limits (setLimits sets
// the workspace's plan). Agent is the agent's create body; it is published and bound to a
// number. Before each registration or start a client ends the call its previous one made,
// untimed, so the open calls stay as many as the clients, as a runtime's would.
func CallStartBench(b *testing.B, servers []*Server, agent map[string]any, setLimits func(map[string]int64)) {
	agentID, runtime := callStartSetup(b, servers[0], agent)
	url := func(c int, path string) string { return servers[c%len(servers)].URL + path }
	register, _ := json.Marshal(map[string]any{"agent_id": agentID, "direction": "inbound", "from_number": "+15551230000",
		"to_number": "+14155550123", "variables": map[string]any{"customer_name": "Ada"}})
	start := func(i int) []byte {
		body, _ := json.Marshal(map[string]any{"direction": "inbound", "to_number": "+14155550123",
			"from_number": fmt.Sprintf("+1555%07d", i), "variables": map[string]any{"customer_name": "Ada"}})
		return body
	}
	clients := BenchClients()
	open := &openCalls{last: map[int]string{}}
	endLast := func(c, _ int) error {
		id := open.take(c)
		if id == "" {
			return nil
		}
		_, err := Send("PUT", url(c, "/api/v1/calls/"+id), runtime, []byte(`{"status":"ended"}`), 204)
		return err
	}
	run := func(b *testing.B, op, before func(c, i int) error) {
		res, err := RunLoad(clients, b.N, op, before)
		if err != nil {
			b.Fatal(err)
		}
		for c := range clients { // the next load starts with none open
			if err := endLast(c, 0); err != nil {
				b.Fatal(err)
			}
		}
		res.Report(b)
	}
	keep := open.keep
	b.Run("get-agent", func(b *testing.B) {
		run(b, func(c, _ int) error {
			_, err := Send("GET", url(c, "/api/v1/agents/"+agentID), runtime, nil, 200)
			return err
		}, nil)
	})
	b.Run("register", func(b *testing.B) {
		run(b, func(c, _ int) error {
			resp, err := Send("POST", url(c, "/api/v1/calls"), runtime, register, 201)
			if err != nil {
				return err
			}
			return keep(c, resp)
		}, endLast)
	})
	startLoad := func(offset int) func(b *testing.B) {
		return func(b *testing.B) {
			run(b, func(c, i int) error {
				resp, err := Send("POST", url(c, "/api/v1/calls/start"), runtime, start(offset+i), 201)
				if err != nil {
					return err
				}
				return keep(c, resp)
			}, endLast)
		}
	}
	b.Run("start", startLoad(0))
	setLimits(map[string]int64{data.LimitConcurrentCalls: 1000})
	b.Run("start-limited", startLoad(5_000_000))
}

// callStartSetup makes, through s, a published agent from body bound to a number, and a
// calls:runtime key; it returns the agent's id and the key.
func callStartSetup(b *testing.B, s *Server, body map[string]any) (agentID, runtime string) {
	owner := s.Owner.Token
	raw, _ := json.Marshal(body)
	a := s.Do("POST", "/api/v1/agents", owner, raw)
	Expect(b, a, 201)
	agentID = a.Data()["id"].(string)
	Expect(b, s.Do("POST", "/api/v1/agents/"+agentID+"/publish", owner, nil), 204)
	Expect(b, s.Do("POST", "/api/v1/numbers", owner, map[string]any{"phone_number": "+14155550123", "provider": "sip",
		"inbound_agent_id": agentID, "variables": map[string]any{"shop": "Acme West"}}), 201)
	k := s.Do("POST", "/api/v1/api-keys", owner, map[string]any{"name": "runtime", "scopes": []string{data.ScopeCallsRuntime}})
	Expect(b, k, 201)
	return agentID, k.JSON()["token"].(string)
}

// openCalls is the call each load client has open.
type openCalls struct {
	mu   sync.Mutex
	last map[int]string
}

// keep notes the call a registration's or a start's answer names as client c's.
func (o *openCalls) keep(c int, resp []byte) error {
	var env struct {
		Data struct {
			ID   string `json:"id"` // a registration's call
			Call struct {
				ID string `json:"id"`
			} `json:"call"` // a start's
		} `json:"data"`
	}
	if err := json.Unmarshal(resp, &env); err != nil {
		return err
	}
	o.mu.Lock()
	o.last[c] = env.Data.ID + env.Data.Call.ID
	o.mu.Unlock()
	return nil
}

// take returns client c's open call, "" for none, and forgets it.
func (o *openCalls) take(c int) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	id := o.last[c]
	delete(o.last, c)
	return id
}
