package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// The crash loop (issue 8, item 4; docs/reliability.md). Each round runs a mixed write load
// from several clients, SIGKILLs the server at a random moment, runs `voiceapi check` on
// the dead server's file, restarts, and reads every record back through the API: an
// acknowledged write must be there exactly; a write that was in flight at the kill may be
// there or not, but nothing else.
const (
	crashClients        = 6
	crashMaxOpsPerRound = 3000                    // per client: bounds a round if the kill never lands
	crashMaxLoad        = 1500 * time.Millisecond // latest kill after the load starts
	crashMinLoad        = 30 * time.Millisecond
	crashMaxListPages   = 2000 // per list: bounds a verification walk
)

// crashRecord is one record a client created, with the states it may be found in: one
// when every write to it was acknowledged, two (before, after) when a write to it was in
// flight at the kill. Values are compared as strings.
type crashRecord struct {
	kind string // key of crashLists
	id   string
	may  []map[string]string
}

// crashLists is where each kind of record is read back, and which fields are checked.
var crashLists = map[string]struct {
	path   string
	fields []string
}{
	"workspace": {"/api/v1/workspaces", []string{"name"}},
	"agent":     {"/api/v1/agents", []string{"name", "status", "published_version"}},
	"number":    {"/api/v1/numbers", []string{"phone_number", "nickname"}},
	"call":      {"/api/v1/calls", []string{"status", "agent_id"}},
	"webhook":   {"/api/v1/webhooks", []string{"url", "description"}},
}

// crashClient owns its records: only its goroutine writes them during a round, and the
// verifier reads them after every client has stopped.
type crashClient struct {
	n       int
	rng     *rand.Rand
	records []*crashRecord
	byKind  map[string][]*crashRecord
	acked   int // acknowledged writes over all rounds
	lost    int // writes in flight at a kill (outcome unknown, both accepted)
}

// crashPhone hands out phone numbers never used before in this run, since a create that
// committed without its acknowledgement still holds its number.
var crashPhone atomic.Int64

func TestCrashLoop(t *testing.T) {
	rounds, seed := crashLoopSettings(t)
	t.Logf("crash loop: %d rounds, seed %d (VOICEAPI_CRASH_SEED reproduces the kill times)", rounds, seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	tmp := t.TempDir()
	bin := voiceapiBinary(t)
	dataDir := filepath.Join(tmp, "data")
	// The per-token rate limit would turn the load into 429s; it has nothing to do with
	// durability.
	flags := []string{"--rate-limit", "0"}

	srv, token := startCrashServer(t, bin, dataDir, flags)
	clients := make([]*crashClient, crashClients)
	for i := range clients {
		clients[i] = &crashClient{n: i, rng: rand.New(rand.NewPCG(seed, uint64(i)+2)), byKind: map[string][]*crashRecord{}}
	}

	start := time.Now()
	for round := 1; round <= rounds; round++ {
		load := loadUntilKilled(t, clients, srv, token, round, rng)
		checkFileAfterKill(t, bin, dataDir, round)
		var stdout string
		srv, stdout = startServer(t, bin, dataDir, flags...)
		if strings.Contains(stdout, "api token") {
			t.Fatalf("round %d: restart printed credentials again", round)
		}
		verified := verifyCrashRecords(t, srv.url, token, clients, round)
		if t.Failed() {
			t.Fatalf("round %d (killed after %v): acknowledged writes lost or changed; seed %d", round, load, seed)
		}
		if round%10 == 0 || round == rounds {
			t.Logf("round %d/%d: killed after %v; %d records verified; %v elapsed", round, rounds, load.Round(time.Millisecond), verified, time.Since(start).Round(time.Second))
		}
	}
	acked, lost := 0, 0
	for _, c := range clients {
		acked += c.acked
		lost += c.lost
	}
	t.Logf("crash loop done: %d rounds in %v; %d acknowledged writes, all present; %d writes in flight at kills (either outcome accepted)",
		rounds, time.Since(start).Round(time.Second), acked, lost)
	srv.cmd.Process.Signal(syscall.SIGTERM)
}

// crashLoopSettings reads the rounds (VOICEAPI_CRASH_ROUNDS, 3 when unset) and the seed
// of the kill times (VOICEAPI_CRASH_SEED, the clock when unset).
func crashLoopSettings(t *testing.T) (rounds int, seed uint64) {
	t.Helper()
	rounds = 3
	if s := os.Getenv("VOICEAPI_CRASH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10000 {
			t.Fatalf("VOICEAPI_CRASH_ROUNDS=%q: want a count from 1 to 10000", s)
		}
		rounds = n
	}
	seed = uint64(time.Now().UnixNano())
	if s := os.Getenv("VOICEAPI_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	return rounds, seed
}

// startCrashServer starts the first server and returns it with the bootstrap token it
// printed.
func startCrashServer(t *testing.T, bin, dataDir string, flags []string) (*proc, string) {
	t.Helper()
	srv, stdout := startServer(t, bin, dataDir, flags...)
	return srv, bootstrapToken(t, stdout)
}

// loadUntilKilled runs the clients' load on srv until a SIGKILL at a random moment, and
// returns how long the load ran.
func loadUntilKilled(t *testing.T, clients []*crashClient, srv *proc, token string, round int, rng *rand.Rand) time.Duration {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: crashClients}}
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() { defer wg.Done(); c.load(t, hc, srv.url, token, round) }()
	}
	load := crashMinLoad + time.Duration(rng.Int64N(int64(crashMaxLoad-crashMinLoad)))
	time.Sleep(load)
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.cmd.Wait()
	wg.Wait()
	hc.CloseIdleConnections()
	return load
}

// checkFileAfterKill checks the file of a killed server passes bbolt's consistency
// check as it is (PostgreSQL recovers from its own log; the records are read back after
// the restart).
func checkFileAfterKill(t *testing.T, bin, dataDir string, round int) {
	t.Helper()
	if !testkit.OnPostgres() {
		if out, err := exec.Command(bin, "check", "--data", dataDir).CombinedOutput(); err != nil || !strings.Contains(string(out), ": ok (") {
			t.Fatalf("round %d: voiceapi check after SIGKILL: %v\n%s", round, err, out)
		}
	}
}

// load writes until the server dies or the round's bound is reached. A write whose
// answer was read in full and is a success is acknowledged; the one in flight when the
// connection broke is unknown, and the record accepts both its old and new state.
func (c *crashClient) load(t *testing.T, hc *http.Client, url, token string, round int) {
	for op := 0; op < crashMaxOpsPerRound; op++ {
		if !c.step(t, hc, url, token, round, op) {
			return
		}
	}
}

// step does one random write; false once the server is gone.
func (c *crashClient) step(t *testing.T, hc *http.Client, url, token string, round, op int) bool {
	s := crashStep{c: c, t: t, hc: hc, url: url, token: token, name: fmt.Sprintf("c%d r%d op%d", c.n, round, op)}
	k := c.rng.IntN(100)
	if k < 45 || len(c.byKind["agent"]) == 0 {
		return s.agentWrite(k)
	}
	return s.otherWrite(k, round, op)
}

// crashStep is one write of a crash client: its name and where it goes.
type crashStep struct {
	c          *crashClient
	t          *testing.T
	hc         *http.Client
	url, token string
	name       string
}

// pick draws one of the client's records of kind; nil when it has none.
func (c *crashClient) pick(kind string) *crashRecord {
	list := c.byKind[kind]
	if len(list) == 0 {
		return nil
	}
	return list[c.rng.IntN(len(list))]
}

// create sends a create and, when acknowledged, records the new record's state.
func (s crashStep) create(kind, path, body string, state func(id string) map[string]string) bool {
	c := s.c
	status, resp, err := crashDo(s.hc, "POST", s.url+path, s.token, body)
	if err != nil {
		c.lost++ // committed or not, its id is unknown: nothing to check
		return false
	}
	if status != 201 {
		s.t.Errorf("POST %s %s: %d %s", path, body, status, resp)
		return false
	}
	var out struct{ Data struct{ ID string } }
	if err := json.Unmarshal(resp, &out); err != nil || out.Data.ID == "" {
		s.t.Errorf("POST %s: no id in %s", path, resp)
		return false
	}
	r := &crashRecord{kind: kind, id: out.Data.ID, may: []map[string]string{state(out.Data.ID)}}
	c.records = append(c.records, r)
	c.byKind[kind] = append(c.byKind[kind], r)
	c.acked++
	return true
}

// change sends a write to r whose success moves it to next.
func (s crashStep) change(r *crashRecord, method, path, body string, want int, next map[string]string) bool {
	status, resp, err := crashDo(s.hc, method, s.url+path, s.token, body)
	if err != nil {
		r.may = append(r.may, next)
		s.c.lost++
		return false
	}
	if status != want {
		s.t.Errorf("%s %s %s: %d %s", method, path, body, status, resp)
		return false
	}
	r.may = []map[string]string{next}
	s.c.acked++
	return true
}

// crashWith is r's certain state with the fields of kv (key, value, …) changed.
func crashWith(r *crashRecord, kv ...string) map[string]string {
	m := map[string]string{}
	for k, v := range r.may[0] {
		m[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// agentWrite creates a workspace or an agent, renames an agent or publishes one, as k
// (0 to 44, or any while the client has no agent) draws.
func (s crashStep) agentWrite(k int) bool {
	name := s.name
	switch {
	case k < 5:
		return s.create("workspace", "/api/v1/workspaces", fmt.Sprintf(`{"name":%q}`, name), func(string) map[string]string {
			return map[string]string{"name": name}
		})
	case k < 20 || len(s.c.byKind["agent"]) == 0:
		return s.create("agent", "/api/v1/agents", fmt.Sprintf(`{"name":%q}`, name), func(string) map[string]string {
			return map[string]string{"name": name, "status": "draft", "published_version": "null"}
		})
	case k < 35:
		a := s.c.pick("agent")
		return s.change(a, "PUT", "/api/v1/agents/"+a.id, fmt.Sprintf(`{"name":%q}`, name), 200, crashWith(a, "name", name, "status", "draft"))
	default:
		a := s.c.pick("agent")
		v := 1
		if pv := a.may[0]["published_version"]; pv != "null" {
			v, _ = strconv.Atoi(pv)
			v++
		}
		return s.change(a, "POST", "/api/v1/agents/"+a.id+"/publish", `{"description":"crash loop"}`, 204,
			crashWith(a, "status", "published", "published_version", strconv.Itoa(v)))
	}
}

// otherWrite creates or changes a number, a call or a webhook, as k (45 to 99) draws.
func (s crashStep) otherWrite(k, round, op int) bool {
	c, name := s.c, s.name
	switch {
	case k < 52:
		phone := fmt.Sprintf("+1555%07d", crashPhone.Add(1))
		return s.create("number", "/api/v1/numbers", fmt.Sprintf(`{"phone_number":%q,"provider":"twilio","nickname":%q,"inbound_agent_id":%q}`, phone, name, c.pick("agent").id),
			func(string) map[string]string { return map[string]string{"phone_number": phone, "nickname": name} })
	case k < 60 && len(c.byKind["number"]) > 0:
		n := c.pick("number")
		return s.change(n, "PUT", "/api/v1/numbers/"+n.id, fmt.Sprintf(`{"nickname":%q}`, name), 200, crashWith(n, "nickname", name))
	case k < 75:
		a := c.pick("agent")
		return s.create("call", "/api/v1/calls", fmt.Sprintf(`{"agent_id":%q,"direction":"web","metadata":{"client":%d}}`, a.id, c.n),
			func(string) map[string]string { return map[string]string{"status": "registered", "agent_id": a.id} })
	case k < 90 && len(c.byKind["call"]) > 0:
		return s.callWrite(c.pick("call"))
	case k < 95 || len(c.byKind["webhook"]) == 0:
		// Subscribed to webhook.test only, which the load never sends: nothing is posted
		// anywhere, and the URL is never resolved.
		u := fmt.Sprintf("https://hooks.example.com/c%d/%d/%d", c.n, round, op)
		return s.create("webhook", "/api/v1/webhooks", fmt.Sprintf(`{"url":%q,"events":["webhook.test"],"description":%q}`, u, name),
			func(string) map[string]string { return map[string]string{"url": u, "description": name} })
	default:
		w := c.pick("webhook")
		return s.change(w, "PUT", "/api/v1/webhooks/"+w.id, fmt.Sprintf(`{"description":%q}`, name), 200, crashWith(w, "description", name))
	}
}

// callWrite moves call on: registered to ongoing, ongoing to ended; a final call only
// has its analysis changed, which is not among the checked fields.
func (s crashStep) callWrite(call *crashRecord) bool {
	switch call.may[0]["status"] {
	case "registered":
		return s.change(call, "PUT", "/api/v1/calls/"+call.id, `{"status":"ongoing"}`, 200, crashWith(call, "status", "ongoing"))
	case "ongoing":
		body := `{"status":"ended","disconnection_reason":"user_hangup","transcript":[{"role":"agent","content":"Hello, how can I help?","start_ms":0},{"role":"user","content":"Bye.","start_ms":1500}]}`
		return s.change(call, "PUT", "/api/v1/calls/"+call.id, body, 200, crashWith(call, "status", "ended"))
	default:
		return s.change(call, "PUT", "/api/v1/calls/"+call.id, `{"analysis":{"sentiment":"positive"}}`, 200, crashWith(call))
	}
}

// verifyCrashRecords lists every kind through the API and checks each client's records
// against the states they may be in; each record then settles on the state found, so the
// next round starts from certainty. It returns how many records it checked.
func verifyCrashRecords(t *testing.T, url, token string, clients []*crashClient, round int) int {
	found := map[string]map[string]map[string]any{}
	for kind, l := range crashLists {
		found[kind] = listAll(t, url+l.path, token)
	}
	n := 0
	for _, c := range clients {
		for _, r := range c.records {
			n++
			got, ok := found[r.kind][r.id]
			if !ok {
				t.Errorf("round %d: acknowledged %s %s is missing after the restart", round, r.kind, r.id)
				continue
			}
			state := map[string]string{}
			for _, f := range crashLists[r.kind].fields {
				state[f] = crashString(got[f])
			}
			match := false
			for _, may := range r.may {
				same := true
				for f, v := range may {
					if state[f] != v {
						same = false
					}
				}
				match = match || same
			}
			if !match {
				t.Errorf("round %d: %s %s is %v after the restart; acknowledged state: %v", round, r.kind, r.id, state, r.may)
				continue
			}
			r.may = []map[string]string{state}
		}
	}
	return n
}

// listAll follows next_cursor through a list at 100 a page and returns its records by id.
func listAll(t *testing.T, url, token string) map[string]map[string]any {
	t.Helper()
	hc := &http.Client{Timeout: 30 * time.Second}
	out := map[string]map[string]any{}
	next := ""
	for page := 0; page < crashMaxListPages; page++ {
		u := url + "?per_page=100"
		if next != "" {
			u += "&cursor=" + next
		}
		status, body, err := crashDo(hc, "GET", u, token, "")
		if err != nil || status != 200 {
			t.Fatalf("GET %s: %d %v %s", u, status, err, body)
		}
		var l struct {
			Data []map[string]any
			Meta struct {
				NextCursor *string `json:"next_cursor"`
			}
		}
		if err := json.Unmarshal(body, &l); err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		for _, r := range l.Data {
			out[crashString(r["id"])] = r
		}
		if l.Meta.NextCursor == nil {
			return out
		}
		next = *l.Meta.NextCursor
	}
	t.Fatalf("GET %s: more than %d pages", url, crashMaxListPages)
	return nil
}

// crashString renders a JSON value as the model stores it: null as "null", numbers
// without a fraction as integers.
func crashString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// crashDo sends one request; err is a transport failure (the server died), any status
// is returned with the whole body, which is what makes a success an acknowledgement.
func crashDo(hc *http.Client, method, url, token, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, resp.Body); err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, buf.Bytes(), nil
}
