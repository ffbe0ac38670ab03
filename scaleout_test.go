package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestHAProxyConfig runs deploy/haproxy.cfg, as docs/scale-out.md gives it, in front of
// three real replicas on one PostgreSQL database: requests through it reach every
// replica, a record written through one is read through all, and a replica killed
// without warning is taken out while every request keeps an answer. It skips without
// haproxy, except under CI=true (.ci/run installs it).
func TestHAProxyConfig(t *testing.T) {
	if testkit.OnPostgres() {
		t.Skip("runs its replicas on PostgreSQL in the default run already (VOICEAPI_TEST_BACKEND=postgres would repeat it)")
	}
	haproxy := haproxyPath(t)
	tmp := t.TempDir()
	bin := voiceapiBinary(t)
	keyDir := filepath.Join(tmp, "key") // the replicas' shared secret key file
	if err := os.Mkdir(keyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	url := databaseOf(t, keyDir)
	replicas, token := startThreeReplicas(t, bin, keyDir, url)
	front, haproxyLog := startHAProxy(t, haproxy, filepath.Join(tmp, "haproxy.cfg"), replicas)
	id := checkRoundRobin(t, front, token)
	checkForgedForwardedIgnored(t, front)
	checkKilledReplicaTakenOut(t, front, token, id, replicas[1], haproxyLog)
	checkNoReplicaLeftAnswersInErrorShape(t, front, token, id, []*proc{replicas[0], replicas[2]}, haproxyLog)
}

// haproxyPath finds haproxy; without it the test skips, except under CI=true.
func haproxyPath(t *testing.T) string {
	t.Helper()
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("haproxy is not installed (CI=true: this test may not be skipped; apt-get install haproxy)")
		}
		t.Skip("haproxy is not installed: apt-get install haproxy")
	}
	return haproxy
}

// startThreeReplicas starts three replicas on the database at url, sharing keyDir's
// secret key, and returns them with the bootstrap token the first printed.
func startThreeReplicas(t *testing.T, bin, keyDir, url string) ([]*proc, string) {
	t.Helper()
	var replicas []*proc
	token := ""
	for i := range 3 {
		p, stdout := startServer(t, bin, keyDir, "--database-url", url, "--trusted-proxies", "127.0.0.1/32")
		replicas = append(replicas, p)
		if i == 0 {
			token = bootstrapToken(t, stdout)
		}
	}
	return replicas, token
}

// checkRoundRobin creates an agent through front and checks twelve reads of it reach
// every replica. It returns the agent's id.
func checkRoundRobin(t *testing.T, front, token string) string {
	t.Helper()
	status, body := call(t, "POST", front+"/api/v1/agents", token, `{"name":"Behind HAProxy"}`)
	if status != 201 {
		t.Fatalf("create through haproxy: %d %s", status, body)
	}
	var created struct{ Data struct{ ID string } }
	json.Unmarshal(body, &created)
	seen := map[string]int{}
	for range 12 {
		name, status := getAgent(t, front, token, created.Data.ID)
		if status != 200 {
			t.Fatalf("GET through haproxy: %d", status)
		}
		seen[name]++
	}
	if len(seen) != 3 {
		t.Fatalf("round robin reached %v, want r1, r2 and r3", seen)
	}
	return created.Data.ID
}

// checkForgedForwardedIgnored sends failed logins through front, each with a Forwarded
// header naming another address, as a password guesser would: the replicas read Forwarded
// before X-Forwarded-For from a trusted proxy, and HAProxy appends only to the latter, so
// unless the proxy drops the client's Forwarded every attempt would count for an address
// of the client's choosing and the login limit (10 a minute) would never bite. On
// PostgreSQL the limit's windows are the clock's minutes, and a login costs a full bcrypt
// (an unknown email too), so the attempts may straddle two windows: a refusal must come
// by the 21st (10 counted in each window at most), never if the forged address counted.
func checkForgedForwardedIgnored(t *testing.T, front string) {
	t.Helper()
	for i := range 21 {
		req, _ := http.NewRequest("POST", front+"/api/v1/auth/login", strings.NewReader(`{"email":"guess@example.com","password":"not-the-password"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Forwarded", fmt.Sprintf("for=203.0.113.%d", i+1))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 429 {
			return
		}
		if resp.StatusCode != 422 {
			t.Fatalf("login %d with a forged Forwarded header answered %d, want 422 or 429", i+1, resp.StatusCode)
		}
	}
	t.Fatal("21 logins with forged Forwarded headers through HAProxy were never refused: the client chose its own address")
}

// checkKilledReplicaTakenOut SIGKILLs r2: the health checks (inter 1s, fall 2) take it
// out, as HAProxy's log says; connection failures before that are retried on another
// replica, so no request goes unanswered. The log, not a time, tells it is out: the
// answers alone would not (a request sent to r2 is answered by another replica anyway),
// and on a loaded machine two checks may take longer than a fixed wait.
func checkKilledReplicaTakenOut(t *testing.T, front, token, id string, r2 *proc, haproxyLog *testkit.SyncBuffer) {
	t.Helper()
	r2.cmd.Process.Signal(syscall.SIGKILL)
	r2.cmd.Wait()
	deadline := time.Now().Add(60 * time.Second) // a bound for a failure only
	for !strings.Contains(haproxyLog.String(), "replicas/r2 is DOWN") {
		name, status := getAgent(t, front, token, id)
		if status != 200 {
			t.Fatalf("GET with r2 killed: %d from %s", status, name)
		}
		if time.Now().After(deadline) {
			t.Fatalf("HAProxy has not taken r2 out:\n%s", haproxyLog.String())
		}
		time.Sleep(250 * time.Millisecond) // 240 a minute at most: under the token's 300
	}
	after := map[string]int{}
	for range 12 {
		name, status := getAgent(t, front, token, id)
		if status != 200 {
			t.Fatalf("GET after r2 was taken out: %d", status)
		}
		after[name]++
	}
	if after["r2"] != 0 || after["r1"] == 0 || after["r3"] == 0 {
		t.Fatalf("after r2 was killed the answers came from %v, want r1 and r3 only", after)
	}
}

// checkNoReplicaLeftAnswersInErrorShape kills the last replicas, as a database outage
// takes every replica out (each /readyz is 503): HAProxy then answers by itself, and
// clients must still get what docs/scale-out.md promises during an outage, a 503
// service_unavailable in the error shape with Retry-After, not HAProxy's HTML page.
func checkNoReplicaLeftAnswersInErrorShape(t *testing.T, front, token, id string, rest []*proc, haproxyLog *testkit.SyncBuffer) {
	t.Helper()
	for _, r := range rest {
		r.cmd.Process.Signal(syscall.SIGKILL)
		r.cmd.Wait()
	}
	deadline := time.Now().Add(60 * time.Second) // a bound for a failure only
	for !strings.Contains(haproxyLog.String(), "backend replicas has no server available") {
		if time.Now().After(deadline) {
			t.Fatalf("HAProxy has not taken every replica out:\n%s", haproxyLog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	req, _ := http.NewRequest("GET", front+"/api/v1/agents/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Code, Message string }
	err = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 503 || err != nil || body.Code != "service_unavailable" || body.Message == "" ||
		resp.Header.Get("Retry-After") == "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("with no replica left HAProxy answered %d (%s, Retry-After %q, decoded %+v, %v), want 503 service_unavailable in the error shape with Retry-After",
			resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Retry-After"), body, err)
	}
	// A browser on a console page gets a page it shows, as the console's own error page
	// during an outage, not JSON.
	req, _ = http.NewRequest("GET", front+"/agents", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	page, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer page.Body.Close()
	if page.StatusCode != 503 || page.Header.Get("Retry-After") == "" || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("a console page with no replica left: %d %s, Retry-After %q; want 503 text/html with Retry-After",
			page.StatusCode, page.Header.Get("Content-Type"), page.Header.Get("Retry-After"))
	}
}

// startHAProxy writes deploy/haproxy.cfg with the replicas' addresses and a free front
// port, checks it, runs it in the foreground and returns the front URL once it serves,
// and what HAProxy logs (its servers' state changes among them).
func startHAProxy(t *testing.T, haproxy, cfgPath string, replicas []*proc) (string, *testkit.SyncBuffer) {
	t.Helper()
	cfg, err := os.ReadFile("deploy/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := ln.Addr().String()
	ln.Close()
	text := strings.Replace(string(cfg), "bind 127.0.0.1:8080", "bind "+front, 1)
	for i, r := range replicas {
		from := fmt.Sprintf("server r%d 127.0.0.1:%d ", i+1, 8081+i)
		if !strings.Contains(text, from) {
			t.Fatalf("deploy/haproxy.cfg has no line %q", from)
		}
		text = strings.Replace(text, from, fmt.Sprintf("server r%d %s ", i+1, strings.TrimPrefix(r.url, "http://")), 1)
	}
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(haproxy, "-c", "-q", "-f", cfgPath).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	cmd := exec.Command(haproxy, "-db", "-f", cfgPath) // -db: foreground
	logs := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "http://" + front
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return url, logs
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy on %s does not serve /readyz", front)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// getAgent reads agent id through url and returns the replica HAProxy names.
func getAgent(t *testing.T, url, token, id string) (replica string, status int) {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/api/v1/agents/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("X-Voiceapi-Replica"), resp.StatusCode
}
