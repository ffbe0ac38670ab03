package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// PostgreSQL restarted under load: every answer is a success or a 503
// service_unavailable with Retry-After in the error shape, never a 500; /readyz says 503;
// the console shows the database is unavailable; once PostgreSQL is back the replicas
// answer again at once (their dead pooled connections are replaced, not failed on), and
// every create retried under its Idempotency-Key was made exactly once (issue 24).
func TestReplicasAnswer503WhileDatabaseRestarts(t *testing.T) {
	cluster, url := ownCluster(t)
	rs := testkit.NewReplicas(t, 2, testkit.ReplicaOptions{URL: url})
	tok := rs[0].Owner.Token
	console := consoleSession(t, rs[1].URL, rs[0].Owner)

	load := startRestartLoad(t, rs, tok)
	time.Sleep(300 * time.Millisecond)
	load.down.Store(true)
	if err := cluster.Halt(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	checkUnavailableWhileDown(t, rs, console)
	time.Sleep(700 * time.Millisecond)
	if err := cluster.Resume(); err != nil {
		t.Fatal(err)
	}
	load.down.Store(false)
	load.back.Store(true)
	time.Sleep(time.Second)
	close(load.stop)
	load.wg.Wait()

	t.Logf("answers: %v; sent after PostgreSQL was back: %v", load.statuses, load.afterBack)
	if load.statuses[503] == 0 {
		t.Error("no request met the restart: the test proved nothing")
	}
	for st, n := range load.afterBack {
		if st >= 300 {
			t.Errorf("%d answers %d to requests sent after PostgreSQL was back, want only successes", n, st)
		}
	}
	if page, err := console.Get(rs[1].URL + "/agents"); err != nil || page.StatusCode != 200 {
		t.Errorf("the console once PostgreSQL is back: %v %v", page, err)
	}
	load.checkMadeOnce(t, rs, tok)
}

// restartLoad is four writers, two a replica, alternating creates under an
// Idempotency-Key and lists until stop, and what they were answered.
type restartLoad struct {
	down, back atomic.Bool
	mu         sync.Mutex
	statuses   map[int]int
	made       map[string]bool     // names answered 201
	unanswered []map[string]string // creates not answered 201: retried once back
	afterBack  map[int]int         // answers to requests sent after the restart ended
	wg         sync.WaitGroup
	stop       chan struct{}
}

// startRestartLoad starts the writers; close stop and wait on wg to end them.
func startRestartLoad(t *testing.T, rs []*testkit.Replica, tok string) *restartLoad {
	t.Helper()
	l := &restartLoad{statuses: map[int]int{}, made: map[string]bool{}, afterBack: map[int]int{}, stop: make(chan struct{})}
	for w := range 4 {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.write(t, w, rs[w%2], tok)
		}()
	}
	return l
}

// write is writer w's loop on replica r: any answer but a success or a well-formed 503
// is an error.
func (l *restartLoad) write(t *testing.T, w int, r *testkit.Replica, tok string) {
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		sentAfterBack := l.back.Load()
		name := fmt.Sprintf("restart %d-%d", w, i)
		key := "restart-" + name
		var resp *testkit.Response
		if i%2 == 0 {
			resp = r.Do("POST", "/api/v1/agents", tok, agentBody(name), "Idempotency-Key", key)
		} else {
			resp = r.Do("GET", "/api/v1/agents?per_page=5", tok, nil)
		}
		l.mu.Lock()
		l.statuses[resp.Status]++
		if sentAfterBack {
			l.afterBack[resp.Status]++
		}
		if i%2 == 0 {
			if resp.Status == 201 {
				l.made[name] = true
			} else {
				l.unanswered = append(l.unanswered, map[string]string{"name": name, "key": key, "replica": fmt.Sprint(w % 2)})
			}
		}
		l.mu.Unlock()
		switch {
		case resp.Status < 300:
		case resp.Status == 503:
			checkUnavailable(t, resp.Status, resp.Header, resp.Body)
		default:
			t.Errorf("writer %d while PostgreSQL restarts (down %v): %d %s", w, l.down.Load(), resp.Status, resp.Body)
		}
	}
}

// checkUnavailableWhileDown checks that, while PostgreSQL is down, every replica's
// /readyz and the console answer 503.
func checkUnavailableWhileDown(t *testing.T, rs []*testkit.Replica, console *http.Client) {
	t.Helper()
	for i, r := range rs {
		resp, err := http.Get(r.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 503 {
			t.Errorf("/readyz of replica %d while PostgreSQL is down: %d", i, resp.StatusCode)
		}
	}
	page, err := console.Get(rs[1].URL + "/agents")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != 503 || !strings.Contains(string(body), "The database is unavailable") {
		t.Errorf("the console while PostgreSQL is down: %d\n%s", page.StatusCode, body)
	}
}

// checkMadeOnce retries each create whose answer was a 503, which may or may not have
// been made (a COMMIT whose answer was lost): its retry under the same key tells, and
// makes it at most once; every agent made is stored once.
func (l *restartLoad) checkMadeOnce(t *testing.T, rs []*testkit.Replica, tok string) {
	t.Helper()
	for _, u := range l.unanswered {
		r := rs[0].Do("POST", "/api/v1/agents", tok, agentBody(u["name"]), "Idempotency-Key", u["key"])
		if r.Status != 201 {
			t.Errorf("retry of %s: %d %s", u["name"], r.Status, r.Body)
			continue
		}
		l.made[u["name"]] = true
	}
	counts := map[string]int{}
	for _, a := range listAll(t, rs[1], "/api/v1/agents", tok) {
		counts[a["name"].(string)]++
	}
	for name := range l.made {
		if counts[name] != 1 {
			t.Errorf("%s is stored %d times, want once", name, counts[name])
		}
	}
}

// checkUnavailable checks a 503 in the conventions' error shape.
func checkUnavailable(t *testing.T, status int, h http.Header, body []byte) {
	t.Helper()
	var e struct{ Code, Message string }
	if err := json.Unmarshal(body, &e); err != nil || e.Code != data.EUNAVAILABLE || !strings.Contains(e.Message, "database is unavailable") {
		t.Errorf("a %d whose body is %s", status, body)
	}
	if h.Get("Retry-After") == "" {
		t.Errorf("a 503 without Retry-After: %v", h)
	}
}

// consoleSession signs in through the console's form and returns a client holding the
// session cookie.
func consoleSession(t *testing.T, base string, a *testkit.Account) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	u, _ := url.Parse(base)
	csrf := ""
	for _, ck := range jar.Cookies(u) {
		csrf = ck.Value // the sign-in form's CSRF cookie, the only one so far
	}
	resp, err = c.PostForm(base+"/login", url.Values{"csrf_token": {csrf}, "email": {a.Email}, "password": {a.Password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
		t.Fatalf("console sign-in: %d", resp.StatusCode)
	}
	return c
}

// Every session of the database ended at once, as a PostgreSQL restart does, between two
// requests: the next requests find the pooled connections dead before any of their
// statements ran, and are served on fresh ones instead of answered 503.
func TestRequestsSurviveTerminatedConnections(t *testing.T) {
	rs := testkit.NewReplicas(t, 1, testkit.ReplicaOptions{})
	r, tok := rs[0], rs[0].Owner.Token
	for i := range 8 { // fill the pools: requests' and shared statements'
		testkit.Expect(t, r.Do("POST", "/api/v1/agents", tok, agentBody(fmt.Sprint("warm ", i))), 201)
		testkit.Expect(t, r.Do("GET", "/api/v1/agents", tok, nil), 200)
	}
	for round := range 3 {
		var ended int
		err := r.PG.Pool().QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&ended)
		if err != nil {
			t.Fatal(err)
		}
		if ended == 0 {
			t.Fatal("no session to end")
		}
		testkit.Expect(t, r.Do("POST", "/api/v1/agents", tok, agentBody(fmt.Sprint("after ", round))), 201)
		testkit.Expect(t, r.Do("GET", "/api/v1/agents", tok, nil), 200)
	}
}

// The connection to PostgreSQL is lost right after an API key's create committed and
// before its response was kept: the client got its 201, the keeping failed. Once the
// database is back, the retry under the same Idempotency-Key gets that 201 again, with
// the same key and token, from the claim the create's transaction wrote (issue 24).
func TestAPIKeyReplayAfterConnectionLostBetweenCommitAndAnswer(t *testing.T) {
	cluster, url := ownCluster(t)
	r := testkit.NewReplicas(t, 1, testkit.ReplicaOptions{URL: url})[0]
	tok := r.Owner.Token
	var armed atomic.Bool
	r.PG.SetEventHook(func() { // called after a commit that recorded events
		if armed.CompareAndSwap(true, false) {
			if err := cluster.Halt(); err != nil {
				t.Error(err)
			}
		}
	})
	armed.Store(true)
	first := r.Do("POST", "/api/v1/api-keys", tok, map[string]any{"name": "runtime"}, "Idempotency-Key", "lost-answer")
	testkit.Expect(t, first, 201)
	if armed.Load() {
		t.Fatal("the create committed no event: the database was never stopped")
	}
	if !strings.Contains(r.Logs.String(), "saving idempotent response") {
		t.Fatalf("the response was kept although the database was down; logs:\n%s", r.Logs.String())
	}
	if down := r.Do("POST", "/api/v1/api-keys", tok, map[string]any{"name": "runtime"}, "Idempotency-Key", "lost-answer"); down.Status != 503 {
		t.Errorf("a retry while the database is down: %d %s", down.Status, down.Body)
	} else {
		checkUnavailable(t, down.Status, down.Header, down.Body)
	}
	if err := cluster.Resume(); err != nil {
		t.Fatal(err)
	}
	again := r.Do("POST", "/api/v1/api-keys", tok, map[string]any{"name": "runtime"}, "Idempotency-Key", "lost-answer")
	testkit.Expect(t, again, 201)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
		t.Fatalf("the retry answered %s (%v), the first %s", again.Body, again.Header, first.Body)
	}
	testkit.Expect(t, r.Do("GET", "/api/v1/user", first.JSON()["token"].(string), nil), 200)
	n := 0
	for _, k := range listAll(t, r, "/api/v1/api-keys", tok) {
		if k["name"] == "runtime" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d keys named runtime, want the one the first request made", n)
	}
}
