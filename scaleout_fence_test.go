package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestHAProxyTakesFencedReplicasOut is a rolling upgrade behind deploy/haproxy.cfg: two
// replicas of this binary serve writes through HAProxy, then a newer voiceapi (this
// binary built with a migration more: postgres/newer_binary.go) starts as the third
// server of the backend, and its start migrates the database. The older replicas answer
// /readyz 503 and HAProxy takes them out (its log says so, code 503); no write they
// answered 201 committed after the migration (its column's default marks those that
// did), none begun after the newer replica was ready was answered 201 by them, every
// write they refused is 503 with the fence's message and stored nothing, and the writes
// after they are out all succeed, through the newer replica. It skips without haproxy,
// except under CI=true (.ci/run installs it).
func TestHAProxyTakesFencedReplicasOut(t *testing.T) {
	if testkit.OnPostgres() {
		t.Skip("runs its replicas on PostgreSQL in the default run already (VOICEAPI_TEST_BACKEND=postgres would repeat it)")
	}
	haproxy := haproxyPath(t)
	tmp := t.TempDir()
	newerBin := buildNewerVoiceapi(t) // built while the older replicas start
	bin := voiceapiBinary(t)
	keyDir := filepath.Join(tmp, "key")
	if err := os.Mkdir(keyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	url := databaseOf(t, keyDir)
	// A limit no writer reaches, so that every request is counted, through the migration too.
	flags := []string{"--database-url", url, "--trusted-proxies", "127.0.0.1/32", "--rate-limit", "100000"}
	r1, stdout := startServer(t, bin, keyDir, flags...)
	token := bootstrapToken(t, stdout)
	r2, _ := startServer(t, bin, keyDir, flags...)
	newerAddr := freeAddr(t) // r3: HAProxy checks it, down, until the newer replica starts there
	front, haproxyLog := startHAProxy(t, haproxy, filepath.Join(tmp, "haproxy.cfg"),
		[]*proc{r1, r2, {url: "http://" + newerAddr}})

	w := startAgentWriters(t, front, token, 2)
	w.waitFor(t, "writes through both older replicas", func(o []writeOutcome) bool {
		return countBy(o, "r1", 201) > 0 && countBy(o, "r2", 201) > 0
	})
	launchServerAt(t, newerBin(), keyDir, newerAddr, false, flags...) // its start migrates
	migrated := time.Now()
	// r3 is up from HAProxy's start (servers start up) unless two checks failed before
	// the newer replica listened, then up again only after two good ones: on a loaded
	// machine that can be after the older ones are out, HAProxy answering 503 itself
	// meanwhile. So the writes held to r3 are those begun once it has answered one.
	waitLogged(t, haproxyLog, "replicas/r1 is DOWN", "replicas/r2 is DOWN")
	w.waitFor(t, "a write answered by the newer replica", func(o []writeOutcome) bool {
		return countBy(o, "r3", 201) > 0
	})
	out := time.Now()
	w.waitFor(t, "writes through the newer replica once the older are out", func(o []writeOutcome) bool {
		n := 0
		for _, x := range o {
			if x.started.After(out) {
				n++
			}
		}
		return n >= 6
	})
	outcomes := w.stop()

	for _, r := range []*proc{r1, r2} {
		if status, body := call(t, "GET", r.url+"/readyz", "", ""); status != 503 || !strings.Contains(string(body), "upgraded by a newer voiceapi") {
			t.Errorf("/readyz of an older replica after the migration: %d %s, want 503 saying why", status, body)
		}
	}
	for _, line := range strings.Split(haproxyLog.String(), "\n") {
		if (strings.Contains(line, "replicas/r1 is DOWN") || strings.Contains(line, "replicas/r2 is DOWN")) && !strings.Contains(line, "code: 503") {
			t.Errorf("HAProxy took an older replica out for another reason than its /readyz 503: %s", line)
		}
	}

	stored := storedAgents(t, url)
	var before, refused, newer int
	for _, o := range outcomes {
		after, ok := stored[o.name]
		switch {
		case o.status == 201 && (o.replica == "r1" || o.replica == "r2"):
			before++
			if !ok || after != nil {
				t.Errorf("%s: answered 201 by the older %s and stored %v, %s, want stored before the migration", o.name, o.replica, ok, mark(after))
			}
			if o.started.After(migrated) {
				t.Errorf("%s: begun once the newer replica was ready, answered 201 by the older %s", o.name, o.replica)
			}
		case o.status == 201 && o.replica == "r3":
			newer++
			if !ok || after == nil || !*after {
				t.Errorf("%s: answered 201 by the newer replica and stored %v, %s", o.name, ok, mark(after))
			}
		case o.status == 503 && (o.replica == "r1" || o.replica == "r2"):
			refused++
			if !strings.Contains(o.body, "upgraded by a newer voiceapi") || o.retryAfter == "" {
				t.Errorf("%s: %s refused it without the fence's answer: Retry-After %q, %s", o.name, o.replica, o.retryAfter, o.body)
			}
			if ok {
				t.Errorf("%s: refused by %s and stored", o.name, o.replica)
			}
		case o.status == 503 && o.replica == "":
			// HAProxy's own answer: no server up for a moment (the older ones out before
			// the newer one's second good check).
			refused++
			if ok {
				t.Errorf("%s: HAProxy answered 503 and the agent was stored", o.name)
			}
		default:
			t.Errorf("%s: %d from %q: %s", o.name, o.status, o.replica, o.body)
		}
		if o.started.After(out) && (o.status != 201 || o.replica != "r3") {
			t.Errorf("%s: begun once HAProxy had taken the older replicas out and the newer one answered, answered %d by %q", o.name, o.status, o.replica)
		}
	}
	t.Logf("%d writes: %d stored by the older replicas before the migration, %d refused by them after it, %d stored by the newer one",
		len(outcomes), before, refused, newer)
}

// buildNewerVoiceapi starts building this checkout with the tag voiceapi_newer (a newer
// voiceapi of one migration more: postgres/newer_binary.go) and returns a function that
// waits for the build and returns the binary's path.
func buildNewerVoiceapi(t *testing.T) func() string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "voiceapi-newer")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() {
		out, err = exec.Command("go", "build", "-tags", "voiceapi_newer", "-o", bin, ".").CombinedOutput()
		close(done)
	}()
	t.Cleanup(func() { <-done }) // before the directory's removal
	return func() string {
		t.Helper()
		<-done
		if err != nil {
			t.Fatalf("go build -tags voiceapi_newer: %v\n%s", err, out)
		}
		return bin
	}
}

// writeOutcome is one agent's create through HAProxy.
type writeOutcome struct {
	name             string
	started          time.Time
	status           int
	replica          string // X-Voiceapi-Replica: which server HAProxy sent it to
	body, retryAfter string
}

// agentWriters create agents through a front, one after another each, until stopped.
type agentWriters struct {
	mu       sync.Mutex
	outcomes []writeOutcome
	stopped  chan struct{}
	wg       sync.WaitGroup
}

func startAgentWriters(t *testing.T, front, token string, n int) *agentWriters {
	w := &agentWriters{stopped: make(chan struct{})}
	for i := range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for j := 0; ; j++ {
				select {
				case <-w.stopped:
					return
				default:
				}
				o := writeOutcome{name: fmt.Sprintf("w%d-%d", i, j), started: time.Now()}
				req, _ := http.NewRequest("POST", front+"/api/v1/agents", strings.NewReader(`{"name":"`+o.name+`"}`))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				o.status, o.replica, o.body, o.retryAfter = resp.StatusCode, resp.Header.Get("X-Voiceapi-Replica"), string(body), resp.Header.Get("Retry-After")
				w.mu.Lock()
				w.outcomes = append(w.outcomes, o)
				w.mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	t.Cleanup(func() { w.stop() })
	return w
}

// waitFor waits until the outcomes so far satisfy ok.
func (w *agentWriters) waitFor(t *testing.T, what string, ok func([]writeOutcome) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a bound for a failure only: loaded CI is slow
	for {
		w.mu.Lock()
		done := ok(w.outcomes)
		w.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, w.stop())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the writers and returns every outcome.
func (w *agentWriters) stop() []writeOutcome {
	select {
	case <-w.stopped:
	default:
		close(w.stopped)
	}
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.outcomes
}

// countBy counts the outcomes replica answered with status.
func countBy(outcomes []writeOutcome, replica string, status int) int {
	n := 0
	for _, o := range outcomes {
		if o.replica == replica && o.status == status {
			n++
		}
	}
	return n
}

// waitLogged waits until HAProxy has logged each of lines (its servers' state changes).
func waitLogged(t *testing.T, log *testkit.SyncBuffer, lines ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a bound for a failure only: loaded CI is slow
	for {
		missing := []string{}
		for _, l := range lines {
			if !strings.Contains(log.String(), l) {
				missing = append(missing, l)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("HAProxy has not logged %q:\n%s", missing, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mark says what the newer migration's column says of an agent.
func mark(after *bool) string {
	if after == nil {
		return "before the newer migration"
	}
	return fmt.Sprintf("after the newer migration (written_after_newer %v)", *after)
}

// storedAgents are the agents stored, by name, with written_after_newer (the newer
// migration's mark: nil for an agent stored before it).
func storedAgents(t *testing.T, url string) map[string]*bool {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	rows, err := pool.Query(ctx, `SELECT name, written_after_newer FROM agents`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]*bool{}
	for rows.Next() {
		var name string
		var after *bool
		if err := rows.Scan(&name, &after); err != nil {
			t.Fatal(err)
		}
		out[name] = after
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
